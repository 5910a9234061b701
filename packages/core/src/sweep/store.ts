// Where a sweep keeps its progress, shared by the instances that run it: a lease per shard (one
// instance steps a shard at a time; a dead one's lease lapses and another takes the shard on)
// and a checkpoint per shard (the time through which its accounts were checked), moved by
// compare-and-set, so a step that lost its lease cannot move it. A sweep store every instance
// shares can keep the app's request rate too (`RateCapStore`), and the tries of work that failed
// for one account (`RetryStore`).

import type { RateLimits } from './rate.js'
import { MemoryRates, type RateCapStore, type RateTurn } from './rate-store.js'
import { type HeldRetry, MemoryRetries, type RetryHold, type RetryStore } from './retries.js'

/** A shard's checkpoint: the time through which it was checked, and its version. */
export interface SweepCheckpoint {
  through: number
  version: number
}

export interface SweepStore {
  /** Takes or renews the named lease for `owner`, for `ttlMs`; false when another holds it. */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>
  /** Gives the lease back, if `owner` still holds it. */
  releaseLease(name: string, owner: string): Promise<void>
  /** The shard's checkpoint, if it was ever stepped. */
  checkpoint(name: string): Promise<SweepCheckpoint | undefined>
  /**
   * Moves the checkpoint to `through` if it is still at version `expected` (`undefined`: none
   * yet); the new version, or `undefined` when another write got there first.
   */
  setCheckpoint(
    name: string,
    through: number,
    expected: number | undefined,
  ): Promise<number | undefined>
}

/**
 * A `SweepStore` in this process's memory: leases, checkpoints, rates and held tries of one
 * process (a second instance needs a shared store). Clock in ms, for tests.
 */
export class MemorySweepStore implements SweepStore, RateCapStore, RetryStore {
  readonly #rates = new MemoryRates()
  readonly #retries = new MemoryRetries()
  readonly #leases = new Map<string, { owner: string; until: number }>()
  readonly #checkpoints = new Map<string, SweepCheckpoint>()
  readonly #now: () => number

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const held = this.#leases.get(name)
    const now = this.#now()
    if (held !== undefined && held.owner !== owner && held.until > now) return false
    this.#leases.set(name, { owner, until: now + ttlMs })
    return true
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.#leases.get(name)?.owner === owner) this.#leases.delete(name)
  }

  async checkpoint(name: string): Promise<SweepCheckpoint | undefined> {
    const found = this.#checkpoints.get(name)
    return found === undefined ? undefined : { ...found }
  }

  async setCheckpoint(
    name: string,
    through: number,
    expected: number | undefined,
  ): Promise<number | undefined> {
    const found = this.#checkpoints.get(name)
    if (found?.version !== expected) return undefined
    const version = (expected ?? 0) + 1
    this.#checkpoints.set(name, { through, version })
    return version
  }

  reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn> {
    return this.#rates.reserveTurn(name, limits, now)
  }

  throttleRate(
    name: string,
    limits: RateLimits,
    now: number,
    retryAfterMs: number | undefined,
  ): Promise<void> {
    return this.#rates.throttleRate(name, limits, now, retryAfterMs)
  }

  holdRetry(name: string, key: string, at: number, failures: number): Promise<void> {
    return this.#retries.holdRetry(name, key, at, failures)
  }

  heldRetry(name: string, key: string): Promise<RetryHold | undefined> {
    return this.#retries.heldRetry(name, key)
  }

  takeRetries(name: string, now: number, limit: number, leaseMs: number): Promise<HeldRetry[]> {
    return this.#retries.takeRetries(name, now, limit, leaseMs)
  }

  dropRetry(name: string, key: string): Promise<void> {
    return this.#retries.dropRetry(name, key)
  }
}
