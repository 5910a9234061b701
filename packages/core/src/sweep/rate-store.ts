import { type RateLimits, type RateTurns, reserveTurn, throttleTurns } from './rate.js'

// Where a rate's turns are kept: in this process (the default of `RateCap`), or in a store every
// instance shares, so the whole app keeps one rate (the sweep stores of Redis and PostgreSQL are
// such stores). A store computes as `reserveTurn` and `throttleTurns` do, atomically for each
// named rate.

/** A turn taken: when it may go (ms, on the caller's clock), and the rate it was spaced by. */
export interface RateTurn {
  at: number
  perSecond: number
}

/**
 * Keeps named rates for every instance that shares it. Each call is atomic for its name: of
 * many instances reserving at once, each gets its own turn, spaced after the others'.
 */
export interface RateCapStore {
  /**
   * Takes the next turn of the named rate at `now` (the caller's clock, in ms), as
   * `reserveTurn` computes it (a rate never used starts at `limits.ceiling`).
   */
  reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn>
  /** A 429 was answered: the named rate lowered as `throttleTurns` computes it. */
  throttleRate(
    name: string,
    limits: RateLimits,
    now: number,
    retryAfterMs: number | undefined,
  ): Promise<void>
}

/** Rates in this process's memory: each `RateCap`'s own by default. */
export class MemoryRates implements RateCapStore {
  readonly #rates = new Map<string, RateTurns>()

  async reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn> {
    const { turns, at } = reserveTurn(this.#rates.get(name), limits, now)
    this.#rates.set(name, turns)
    return { at, perSecond: turns.perSecond }
  }

  async throttleRate(
    name: string,
    limits: RateLimits,
    now: number,
    retryAfterMs: number | undefined,
  ): Promise<void> {
    this.#rates.set(name, throttleTurns(this.#rates.get(name), limits, now, retryAfterMs))
  }
}
