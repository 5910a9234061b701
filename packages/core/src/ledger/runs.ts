import type { CredentialCipher } from '../credentials/types.js'
import { openBody, sealBody } from './bodies.js'
import { tellDeadLetter } from './dead-letters.js'
import type { Admission, Running } from './deliver.js'
import type { LedgerEntry, ResourceMark, StoredLedgerEntry } from './entry.js'
import { cleanError } from './entry.js'
import {
  type Arrival,
  arrival,
  type Claim,
  type Delivery,
  failedWith,
  finished,
  firstArrival,
  queuedArrival,
  renewed,
  replayArrival,
} from './machine.js'
import { type DeliveryLedgerOptions, resolveLedgerOptions } from './options.js'
import { markOf } from './order.js'
import type { LedgerFilter, LedgerPage, LedgerStore } from './store.js'
import { ResourceTurns } from './turns.js'
import { advanceMark, checkOrder, settle, WRITE_TRIES, writeArrival } from './writes.js'

// Running deliveries under the ledger's leases: each arrival asks `machine.ts` what to write,
// writes it by compare-and-set (a lost race reads again), checks the ordering guard
// (`order.ts`), and writes how the handlers ended; one resource's deliveries take turns
// (`turns.ts`). `DeliveryLedger` is its public face.

export class LedgerRuns {
  readonly store: LedgerStore
  readonly cipher: CredentialCipher | undefined
  readonly bodyMs: number
  readonly entryMs: number
  readonly maxAttempts: number
  readonly leaseMs: number
  readonly orderWaitMs: number
  readonly stale: 'skip' | 'run'
  readonly volatile: ReadonlySet<string> | undefined
  readonly now: () => number
  /** The deliveries running in this process: one timer renews all their leases. */
  readonly #held = new Set<Running>()
  #ticker: ReturnType<typeof setInterval> | undefined
  readonly #turns: ResourceTurns

  constructor(readonly options: DeliveryLedgerOptions) {
    const settings = resolveLedgerOptions(options)
    this.store = options.store
    this.cipher = options.cipher
    this.bodyMs = settings.bodyMs
    this.entryMs = settings.entryMs
    this.maxAttempts = settings.maxAttempts
    this.leaseMs = settings.leaseMs
    this.orderWaitMs = settings.orderWaitMs
    this.stale = settings.stale
    this.volatile = settings.volatile
    this.now = options.now ?? Date.now
    this.#turns = new ResourceTurns(this)
  }

  /** Whether a delivery is queued or running in its resource's turn in this process. */
  inTurnHere(id: string): boolean {
    return this.#turns.inTurnHere(id)
  }

  /**
   * Runs `work` once every earlier work of this process on the resource has ended and, with a
   * store several processes share, once this process holds the resource (`turns.ts`).
   */
  inTurn<T>(resourceId: string, id: string, work: () => Promise<T>, busy: T): Promise<T> {
    return this.#turns.inTurn(resourceId, id, work, busy)
  }

  hold(running: Running): () => void {
    this.#held.add(running)
    if (this.#ticker === undefined) {
      // Stopped by a tick that finds nothing held, not by each release: a timer made and
      // cleared per delivery would cost more than the rest of the ledger's work in process.
      this.#ticker = setInterval(
        () => {
          if (this.#held.size === 0 && this.#turns.holding === 0) {
            clearInterval(this.#ticker)
            this.#ticker = undefined
          }
          for (const held of this.#held) this.renew(held).catch(() => {})
          this.#turns.renew()
        },
        Math.floor(this.leaseMs / 3),
      )
      ;(this.#ticker as { unref?: () => void }).unref?.()
    }
    return () => {
      this.#held.delete(running)
    }
  }

  get(id: string): Promise<StoredLedgerEntry | undefined> {
    return this.store.get(id)
  }

  list(filter?: LedgerFilter): Promise<LedgerPage> {
    return this.store.list(filter)
  }

  /** A kept body's text, opened; `undefined` once it expired. */
  bodyOf(entry: LedgerEntry): Promise<string | undefined> {
    return openBody(this.cipher, entry, this.now())
  }

  /** A new delivery's fields, its body kept until the retention's end. */
  delivery(
    fields: Omit<Delivery, 'body' | 'bodyExpiresAt'>,
    text: string,
  ): Delivery | Promise<Delivery> {
    const bodyExpiresAt = this.now() + this.bodyMs
    // Sealed when the ledger has a cipher (a promise); kept as it is, at once, when not.
    if (this.cipher === undefined) return { ...fields, body: text, bodyExpiresAt }
    return sealBody(this.cipher, fields.id, text).then((body) => ({
      ...fields,
      body,
      bodyExpiresAt,
    }))
  }

  #claim(owner: string): Claim {
    return { owner, now: this.now(), leaseMs: this.leaseMs }
  }

  /**
   * A delivery arrives: recorded on its first arrival by one write (no read before it), else
   * moved on by what it came to; then checked against its resource's mark. Every write is a
   * compare-and-set: a lost race reads the entry again.
   */
  async admit(delivery: Delivery, owner: string): Promise<Admission> {
    const first = firstArrival(delivery, this.#claim(owner))
    const { version, read } = await writeArrival(this.store, first, undefined)
    if (version !== undefined)
      return this.#started({ entry: { ...first, version }, owner, stale: false }, read)
    return this.#admit(delivery.id, owner, (current, claim) =>
      current === undefined
        ? { action: 'run', entry: firstArrival(delivery, claim) }
        : arrival(current, claim),
    )
  }

  /**
   * A replay of a recorded entry (`undefined`: none): runs it unless another runs it now, or it
   * is done (unless `again`).
   */
  async admitReplay(id: string, owner: string, again = false): Promise<Admission | undefined> {
    if ((await this.store.get(id)) === undefined) return undefined
    return this.#admit(id, owner, (current, claim) =>
      current === undefined ? { action: 'busy' } : replayArrival(current, claim, again),
    )
  }

  async #admit(
    id: string,
    owner: string,
    decide: (current: StoredLedgerEntry | undefined, claim: Claim) => Arrival,
  ): Promise<Admission> {
    for (let tries = 0; tries <= WRITE_TRIES; tries++) {
      const current = await this.store.get(id)
      const decided = decide(current, this.#claim(owner))
      if (decided.action !== 'run') return decided
      const { version, read } = await writeArrival(this.store, decided.entry, current?.version)
      if (version !== undefined)
        return this.#started({ entry: { ...decided.entry, version }, owner, stale: false }, read)
    }
    return { action: 'busy' }
  }

  /** A run just written: past the ordering guard, its lease still live as the handlers start. */
  #started(
    running: Running,
    read: { mark: ResourceMark | undefined } | undefined,
  ): Admission | Promise<Admission> {
    // Without a resource and with a live lease (nearly always): no further turn.
    if (markOf(running.entry) === undefined && (running.entry.leaseUntil ?? 0) > this.now())
      return { action: 'run', running }
    return this.#checked(running, read)
  }

  async #checked(
    running: Running,
    read: { mark: ResourceMark | undefined } | undefined,
  ): Promise<Admission> {
    const admitted = await checkOrder(this.store, running, this.stale, this.now, read)
    if (admitted.action !== 'run' || (await this.#live(admitted.running))) return admitted
    return { action: 'busy' }
  }

  /** Records a delivery handed to a queue: `received`; the worker's outcome follows. */
  async received(delivery: Delivery): Promise<'recorded' | 'duplicate'> {
    const version = await this.store.write(queuedArrival(delivery, this.now()), undefined)
    return version === undefined ? 'duplicate' : 'recorded'
  }

  /**
   * Whether the lease is live as the handlers start: one whose time passed while the store
   * answered (a slow write, a paused process) is renewed first, or lost to whoever took over.
   */
  async #live(running: Running): Promise<boolean> {
    for (let tries = 0; tries <= WRITE_TRIES; tries++) {
      if ((running.entry.leaseUntil ?? 0) > this.now()) return true
      if (!(await this.renew(running))) return false
    }
    return false
  }

  /** Renews a running delivery's lease; `false` once another owner took it over. */
  async renew(running: Running): Promise<boolean> {
    return settle(this.store, running, (entry) => renewed(entry, this.#claim(running.owner)))
  }

  /** The handlers finished: `done`, and the resource's mark moves on to this delivery. */
  async finish(running: Running): Promise<void> {
    // The mark moves on with the write that makes the entry done (one round trip when the
    // store can), so no process sees the entry done and the mark behind it.
    const now = this.now()
    const own = markOf(running.entry, now)
    const mark = running.mark === undefined ? own : { ...running.mark, appliedAt: now }
    const done = (entry: LedgerEntry) => finished(entry, running.owner, now)
    if (mark === undefined || this.store.writeAdvancingMark !== undefined)
      await settle(this.store, running, done, mark)
    else if (await settle(this.store, running, done)) await advanceMark(this.store, mark)
  }

  /** The handlers threw: `failed`, or `dead` past `maxAttempts` (then `onDeadLetter`). */
  async fail(
    running: Running,
    error: unknown,
    finalAttempt = false,
  ): Promise<LedgerEntry | undefined> {
    let dead: LedgerEntry | undefined
    await settle(this.store, running, (entry) => {
      const most = finalAttempt ? entry.attempts : this.maxAttempts
      const next = failedWith(entry, running.owner, cleanError(error), this.now(), most)
      dead = next?.status === 'dead' ? next : undefined
      return next
    })
    if (dead !== undefined) await tellDeadLetter(this.options, dead)
    return dead
  }
}
