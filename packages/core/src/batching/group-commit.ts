// Group commit: work items that arrive while a write is in flight are written together by the
// next one. At one item at a time, each is written at once, alone (no waiting for company);
// under load, a write carries everything that arrived during the one before, up to `maxSize`.
// After a write that carried several, the callers it answered come back within the same turn
// of the event loop: the next write waits for that turn's end, so they share it rather than
// the first of them going alone and the rest waiting a round trip behind it.
// A caller's promise settles only with the write that carried its item. A queue package uses
// it so that concurrent deliveries share one round trip, each answered once its job is stored.

/** An item waiting for its write, and how to tell its caller. */
interface Waiting<T> {
  item: T
  resolve: () => void
  reject: (error: unknown) => void
}

/** Writes items in groups; see the top of this file. */
export class GroupCommit<T> {
  readonly #waiting: Waiting<T>[] = []
  #inFlight = 0
  /** Items the last write carried: above one, a write started from idle waits for the turn's end. */
  #lastSize = 0
  #deferred = false

  /**
   * @param write Writes a group durably; rejects when none of it may be taken as written.
   * @param maxSize Most items per write. Default 64.
   * @param maxInFlight Writes under way at once. Default 1.
   */
  constructor(
    readonly write: (items: T[]) => Promise<unknown>,
    readonly maxSize = 64,
    readonly maxInFlight = 1,
  ) {}

  /** Resolves once the write that carried `item` resolved; rejects with its error. */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject })
      if (this.#inFlight < this.maxInFlight) this.#start()
    })
  }

  #start(): void {
    if (this.#lastSize <= 1) {
      this.#next()
      return
    }
    if (this.#deferred) return
    this.#deferred = true
    afterTurn(() => {
      this.#deferred = false
      this.#lastSize = 0
      if (this.#inFlight < this.maxInFlight) this.#next()
    })
  }

  /** Items waiting for a write now (not counting those being written). */
  get waiting(): number {
    return this.#waiting.length
  }

  #next(): void {
    if (this.#waiting.length === 0) return
    const group = this.#waiting.splice(0, this.maxSize)
    this.#lastSize = group.length
    this.#inFlight++
    let written: Promise<unknown>
    try {
      written = this.write(group.map((w) => w.item))
    } catch (error) {
      written = Promise.reject(error)
    }
    written.then(
      () => this.#settled(group, undefined, true),
      (error: unknown) => this.#settled(group, error, false),
    )
  }

  #settled(group: Waiting<T>[], error: unknown, ok: boolean): void {
    this.#inFlight--
    for (const w of group) {
      if (ok) w.resolve()
      else w.reject(error)
    }
    this.#next()
  }
}

/** Runs `work` once this turn of the event loop (its promise callbacks included) is over. */
function afterTurn(work: () => void): void {
  // A declaration, not a constant chosen at load: nothing runs when the module loads, so a
  // bundler drops it from an app that never groups writes.
  if (typeof globalThis.setImmediate === 'function') globalThis.setImmediate(work)
  else setTimeout(work, 0)
}
