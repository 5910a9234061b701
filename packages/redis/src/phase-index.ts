import type { PhaseRange } from '@scheduling-kit/core'
import { decodeStoreKey, encodeStoreKey, PHASES, phaseOf } from '@scheduling-kit/core/store'
import type { RedisClient } from './scan.js'

// The subscription records' index by sweep phase, so a sweep's step reads only the accounts
// of its window. Sixteen sorted sets, one per sixteenth of the phases, each in a hash slot of
// its own (outside the records' slots, spread over a Cluster's masters): a member is the
// phase as eight hex digits, a colon and the account key as stored (`encodeStoreKey`), all
// of one score, so a window is one `ZRANGEBYLEX` per set it touches, paged from the last
// member given (exact whatever is written meanwhile). The phase is the key's own, so adding
// a member is idempotent. A record is indexed before it is first written and again after (a
// delete racing it cannot leave it out: `removed` looks again after taking it out); records
// written by older versions are indexed by the full scan a step runs when the index has not
// been completed within `HEAL_MS` (the first step after an upgrade, then once a day).

/** How long a complete index is trusted before a step indexes every record again. */
export const HEAL_MS = 24 * 60 * 60_000

/** Members read per `ZRANGEBYLEX`. */
const PAGE = 1_000

/** The sets: each holds the phases whose first hex digit is its own. */
const SETS = 16
const SET_SPAN = PHASES / SETS

const hex = (phase: number) => phase.toString(16).padStart(8, '0')

export class PhaseIndex {
  readonly #client: RedisClient
  readonly #prefix: string

  constructor(client: RedisClient, prefix: string) {
    this.#client = client
    this.#prefix = prefix
  }

  /** The set of the phases `phase` is among. */
  #set(phase: number): string {
    return `${this.#prefix}subscription-phase:{${Math.floor(phase / SET_SPAN).toString(16)}}`
  }

  /** Where the index says when it was last made complete. */
  get #marker(): string {
    return `${this.#prefix}subscription-phase-index`
  }

  /** The key's member of its set. */
  static member(key: string): string {
    return `${hex(phaseOf(key))}:${encodeStoreKey(key)}`
  }

  /** Indexes one account (idempotent). */
  async add(key: string): Promise<void> {
    await this.#client.zadd(this.#set(phaseOf(key)), 0, PhaseIndex.member(key))
  }

  /** Indexes many accounts, one command per set. */
  async addAll(keys: readonly string[]): Promise<void> {
    const bySet = new Map<string, string[]>()
    for (const key of keys) {
      const set = this.#set(phaseOf(key))
      const args = bySet.get(set) ?? []
      args.push('0', PhaseIndex.member(key))
      bySet.set(set, args)
    }
    await Promise.all([...bySet].map(([set, args]) => this.#client.zadd(set, ...args)))
  }

  /**
   * Takes a deleted account out, then looks again: a record written meanwhile (a new one
   * under the same key) is indexed again, so a delete never hides a live record.
   */
  async removed(key: string, stillThere: () => Promise<boolean>): Promise<void> {
    await this.#client.zrem(this.#set(phaseOf(key)), PhaseIndex.member(key))
    if (await stillThere()) await this.add(key)
  }

  /** Whether the index was made complete within `HEAL_MS`. */
  async complete(): Promise<boolean> {
    return (await this.#client.exists(this.#marker)) === 1
  }

  /** Says the index is complete: every record was indexed by a full scan that just ended. */
  async markComplete(): Promise<void> {
    await this.#client.set(this.#marker, String(Date.now()), 'PX', HEAL_MS)
  }

  /**
   * Every indexed key whose phase falls in `phases` (wrapping past the last phase too), each
   * once, in phase order.
   */
  async *keys(phases: PhaseRange): AsyncIterable<string> {
    // Phases are whole numbers: p >= from is p >= ceil(from), p < to is p < ceil(to).
    const [from, to] = [phases.from, phases.to].map((p) =>
      Math.min(PHASES, Math.max(0, Math.ceil(p))),
    ) as [number, number]
    if (from === to) return
    const wraps = from > to
    yield* this.#range(from, wraps ? PHASES : to)
    if (wraps) yield* this.#range(0, to)
  }

  /** The keys of phases from `from` up to `to` (excluded), set by set. */
  async *#range(from: number, to: number): AsyncIterable<string> {
    for (let start = from; start < to; start = (Math.floor(start / SET_SPAN) + 1) * SET_SPAN) {
      const set = this.#set(start)
      let min = `[${hex(start)}`
      const max = to >= PHASES ? '+' : `(${hex(to)}`
      for (;;) {
        const members = await this.#client.zrangebylex(set, min, max, 'LIMIT', 0, PAGE)
        for (const member of members) yield decodeStoreKey(member.slice(9))
        if (members.length < PAGE) break
        min = `(${members.at(-1)}`
      }
    }
  }
}
