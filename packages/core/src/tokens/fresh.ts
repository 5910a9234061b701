import type { TokenRecord } from './record.js'

// The records a token manager hands out without a store read, each until its time (its
// refresh time, or the revalidation bound). `getAccessToken` costs one map lookup and no clock
// read (the clock, 40 ns, would cost more than the rest of the call): entries are dropped by a
// timer that runs only while some are kept, in quarter-second steps, and every 64th read of an
// entry looks at the clock, for runtimes whose timers may not fire while idle. Every other read
// looks at the clock; with a clock of the caller's (tests), every read does.

/** The timer's step, in ms: an entry is dropped at most this late. */
const STEP_MS = 250

export interface Kept {
  record: TokenRecord
  until: number
  reads: number
  /** The access token as a settled promise, made once: every call until then shares it. */
  token: Promise<string> | undefined
}

export class FreshRecords {
  /**
   * The kept entries. The token manager's `getAccessToken` reads them itself, the cheapest way:
   * an entry with a `token` is answered with it, the clock looked at on every 64th read (see
   * `answer`).
   */
  readonly entries = new Map<string, Kept>()
  /** Keys by the step their time falls in. */
  readonly #due = new Map<number, Set<string>>()
  #timer: ReturnType<typeof setTimeout> | undefined
  /** The last step the timer swept. */
  #swept = 0

  /**
   * @param clock The manager's clock.
   * @param everyRead Look at the clock on every read (a clock of the caller's: no timer follows it).
   * @param max The most entries kept; past it, the one set longest ago is dropped (read again from the store).
   */
  constructor(
    readonly clock: () => number,
    readonly everyRead: boolean,
    readonly max: number,
  ) {}

  /** The record kept for `key`, while its time lasts. */
  get(key: string): TokenRecord | undefined {
    return this.#entry(key)?.record
  }

  /** The entry for `key` while its time lasts, by the clock. */
  #entry(key: string): Kept | undefined {
    const kept = this.entries.get(key)
    if (kept === undefined) return undefined
    if (this.clock() >= kept.until) {
      this.entries.delete(key)
      return undefined
    }
    return kept
  }

  /** Keeps `record` for `key` until `until` (by the manager's clock). */
  set(key: string, record: TokenRecord, until: number): void {
    if (until <= this.clock()) {
      this.entries.delete(key)
      return
    }
    // Set last, so the first entry is the one set longest ago: past the bound it goes alone
    // (dropping them all would send every key's next read to the store at once).
    this.#drop(key)
    if (this.entries.size >= this.max) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.#drop(oldest.value)
    }
    // Without a timer to follow the caller's clock, no token is answered without looking at it.
    const token = this.everyRead ? undefined : Promise.resolve(record.accessToken)
    this.entries.set(key, { record, until, reads: 0, token })
    if (this.everyRead) return
    const step = Math.ceil(until / STEP_MS)
    let keys = this.#due.get(step)
    if (keys === undefined) {
      keys = new Set()
      this.#due.set(step, keys)
    }
    keys.add(key)
    this.#arm()
  }

  delete(key: string): void {
    this.#drop(key)
  }

  /** Drops `key`'s entry and its place among the due keys (a bound of the timer's index too). */
  #drop(key: string): void {
    const kept = this.entries.get(key)
    if (kept === undefined) return
    this.entries.delete(key)
    const step = Math.ceil(kept.until / STEP_MS)
    const keys = this.#due.get(step)
    if (keys?.delete(key) === true && keys.size === 0) this.#due.delete(step)
  }

  clear(): void {
    this.entries.clear()
    this.#due.clear()
  }

  /** Stops the timer (the manager closed); nothing is kept any more. */
  close(): void {
    this.clear()
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #arm(): void {
    if (this.#timer !== undefined) return
    this.#swept = Math.floor(this.clock() / STEP_MS)
    this.#schedule()
  }

  /**
   * The next sweep at the next step's start (not a fixed interval from an arbitrary phase): an
   * entry is then dropped at most one step after its time, plus the timer's own lateness.
   */
  #schedule(): void {
    this.#timer = setTimeout(() => this.#sweep(), STEP_MS - (this.clock() % STEP_MS))
    ;(this.#timer as { unref?: () => void }).unref?.()
  }

  /**
   * `getAccessToken`'s answer from an entry on a read that looks at the clock: its token while
   * its time lasts, else `undefined` (the caller takes the slow path).
   */
  answer(kept: Kept): Promise<string> | undefined {
    return this.clock() < kept.until ? kept.token : undefined
  }

  /** Drops the entries whose time passed; stops the timer once nothing is due. */
  #sweep(): void {
    const now = this.clock()
    const step = Math.floor(now / STEP_MS)
    // Step by step, or (after a long pause, a clock jump) over the steps that have keys.
    const steps =
      step - this.#swept <= this.#due.size
        ? Array.from({ length: step - this.#swept }, (_, i) => this.#swept + 1 + i)
        : [...this.#due.keys()].filter((s) => s <= step)
    for (const s of steps) {
      const keys = this.#due.get(s)
      if (keys === undefined) continue
      this.#due.delete(s)
      for (const key of keys) {
        const kept = this.entries.get(key)
        if (kept !== undefined && kept.until <= now) this.entries.delete(key)
      }
    }
    this.#swept = step
    this.#timer = undefined
    if (this.#due.size > 0) this.#schedule()
  }
}
