// Periodic work that failed for one account (a refresh ahead of expiry, a sweep's check) waits
// for its next try in the store the instances share, so the try outlives the process that
// failed and any instance takes it when it is due. Each account backs off on its own, as long
// as the server asked (`Retry-After`): an endpoint down for an hour is called at most twice an
// account in that hour. A try is taken under a lease (its time moved on by the lease's length
// as it is taken): an instance killed while it tries leaves it to come due again.

/** A try taken: the account's key, and how many tries failed in a row before it. */
export interface HeldRetry {
  key: string
  failures: number
}

/** A try held for an account: when it comes due, ms since the epoch, and the failures so far. */
export interface RetryHold {
  at: number
  failures: number
}

/**
 * Where failed work waits for its next try, by task (`name`) and account key. Optional on a
 * `SweepStore`: `MemorySweepStore`, `RedisSweepStore` and `PostgresSweepStore` have it; with a
 * store that does not, the tries wait in the process that failed (and die with it).
 */
export interface RetryStore {
  /** Holds `key`'s next try of `name` until `at`, replacing what was held. */
  holdRetry(name: string, key: string, at: number, failures: number): Promise<void>
  /** What is held for `key`, if anything. */
  heldRetry(name: string, key: string): Promise<RetryHold | undefined>
  /**
   * Takes at most `limit` tries of `name` due by `now`, the earliest first, in one atomic
   * step: each one's time becomes `now + leaseMs`, so no other instance takes it meanwhile and
   * it comes due again if the taker dies before it holds the next try or drops it.
   */
  takeRetries(name: string, now: number, limit: number, leaseMs: number): Promise<HeldRetry[]>
  /** Drops what is held for `key` (its work was done). */
  dropRetry(name: string, key: string): Promise<void>
}

/** Whether a store keeps tries (`RetryStore`). */
export function isRetryStore(store: object): store is RetryStore {
  const s = store as Partial<RetryStore>
  return (
    typeof s.holdRetry === 'function' &&
    typeof s.heldRetry === 'function' &&
    typeof s.takeRetries === 'function' &&
    typeof s.dropRetry === 'function'
  )
}

/** The longest a server's `Retry-After` holds a try back: a period (its turn comes anyway). */
const askedWithin = (askedMs: number | undefined, periodMs: number): number =>
  askedMs !== undefined && Number.isFinite(askedMs) && askedMs > 0 ? Math.min(askedMs, periodMs) : 0

/**
 * When the next try of work that failed `failures` times in a row (1 for the first failure)
 * comes, at `now`, for a task of period `periodMs`: the first a twentieth of the period later
 * (5 minutes of 100: a blip is over before the token's last minutes), each after it 0.6 of the
 * period (an hour of 100) so that no hour holds more than two tries; never sooner than the
 * server asked, never later than a period.
 */
export function nextTryAt(
  now: number,
  failures: number,
  periodMs: number,
  askedMs?: number,
): number {
  const backoff = failures <= 1 ? periodMs / 20 : periodMs * 0.6
  return now + Math.ceil(Math.max(backoff, askedWithin(askedMs, periodMs)))
}

/** A count of failures as read from a store: a whole number of at least 1, or 1. */
export function failuresRead(value: unknown): number {
  const n = typeof value === 'string' && value !== '' ? Number(value) : value
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : 1
}

/**
 * The wait a failure asked for (`retryAfterMs` of an `ApiError` or `OAuthError`, or of its
 * cause), in ms, when it asked.
 */
export function askedWaitMs(error: unknown): number | undefined {
  let current = error
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const asked = (current as { retryAfterMs?: unknown }).retryAfterMs
    if (typeof asked === 'number' && Number.isFinite(asked) && asked >= 0) return asked
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** At most this many tries are held per task in memory; past it, the earliest due goes. */
const MEMORY_LIMIT = 100_000

/** Tries held in this process's memory: `MemorySweepStore`'s, and a store's without its own. */
export class MemoryRetries implements RetryStore {
  readonly #held = new Map<string, Map<string, RetryHold>>()

  #of(name: string): Map<string, RetryHold> {
    let held = this.#held.get(name)
    if (held === undefined) {
      held = new Map()
      this.#held.set(name, held)
    }
    return held
  }

  async holdRetry(name: string, key: string, at: number, failures: number): Promise<void> {
    const held = this.#of(name)
    held.delete(key)
    if (held.size >= MEMORY_LIMIT) held.delete(held.keys().next().value!)
    held.set(key, { at, failures })
  }

  async heldRetry(name: string, key: string): Promise<RetryHold | undefined> {
    const found = this.#held.get(name)?.get(key)
    return found === undefined ? undefined : { ...found }
  }

  async takeRetries(
    name: string,
    now: number,
    limit: number,
    leaseMs: number,
  ): Promise<HeldRetry[]> {
    const held = this.#held.get(name)
    if (held === undefined) return []
    const due = [...held].filter(([, h]) => h.at <= now).sort(([, a], [, b]) => a.at - b.at)
    return due.slice(0, limit).map(([key, h]) => {
      h.at = now + leaseMs
      return { key, failures: h.failures }
    })
  }

  async dropRetry(name: string, key: string): Promise<void> {
    this.#held.get(name)?.delete(key)
  }
}
