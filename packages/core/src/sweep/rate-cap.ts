import { ConfigError } from '../errors/errors.js'
import type { FetchLike } from '../http/fetch.js'
import { retryAfterMs } from '../http/retry-after.js'
import { sleep } from '../sleep.js'
import {
  latestTurn,
  type RateLimits,
  type RateState,
  raised,
  startRate,
  throttled,
} from './rate.js'
import { MemoryRates, type RateCapStore } from './rate-store.js'

// The executor of the rate plan (`rate.ts`): requests wait their turn, spaced by the rate;
// each 429 seen lowers it. The turns are kept in this process, or in a store every instance
// shares (`rate-store.ts`).

export interface RateCapOptions {
  /** The most requests a second (the rate starts there). */
  perSecond: number
  /** The least a run of 429s takes it to. Default a hundredth of `perSecond`. */
  floor?: number
  /** How long without a 429 before the rate is raised a tenth of `perSecond`, in ms. Default 10 000. */
  raiseEveryMs?: number
  /**
   * Where the rate and its turns are kept. Default: this process only. Give a store every
   * instance shares (`RedisSweepStore`, `PostgresSweepStore`) and the instances keep one rate
   * between them: turns spaced across all of them, a 429 seen by one lowering it for all.
   * Each instance must give the same `perSecond`, `floor` and `raiseEveryMs`.
   */
  store?: RateCapStore
  /** The rate's name in `store`: caps of different names are separate rates. Default `api`. */
  name?: string
  /** Clock in ms, and how to wait, for tests. Default `Date.now` and a timer. */
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

/**
 * One request rate for everything given it: `acquire()` before each request, `throttled()` on a
 * 429, or `wrap(fetch)` to do both for every request a client makes. Give the one cap to the
 * subscriptions (`rateCap`), so their sweeps, repairs and lists share it. Without a `store`
 * the cap is this process's; with one every instance shares, it is the whole app's.
 *
 * Turns are given on each instance's clock: keep the clocks in step (NTP). A clock ahead only
 * holds the others back; one behind sends its requests late by its lag.
 *
 * @example
 * ```ts
 * const rateCap = new RateCap({ perSecond: 10, store: new RedisSweepStore({ client: redis }) })
 * const subscriptions = createWebhookSubscriptions({ ..., rateCap })
 * ```
 */
export class RateCap {
  readonly #limits: RateLimits
  readonly #now: () => number
  readonly #sleep: (ms: number) => Promise<void>
  readonly #store: RateCapStore
  readonly #name: string
  /** The rate as last seen here (a turn's, or a 429's here), for `perSecond`. */
  #seen: RateState
  /** Requests let through, and 429s seen. */
  readonly counters = { requests: 0, throttled: 0 }

  constructor(options: RateCapOptions) {
    const ceiling = options?.perSecond
    if (typeof ceiling !== 'number' || !(ceiling > 0) || !Number.isFinite(ceiling))
      throw new ConfigError('RateCap: perSecond must be a number of requests a second above 0.')
    const floor = options.floor ?? ceiling / 100
    if (typeof floor !== 'number' || !(floor > 0) || floor > ceiling)
      throw new ConfigError('RateCap: floor must be above 0 and at most perSecond.')
    const raiseEveryMs = options.raiseEveryMs ?? 10_000
    if (typeof raiseEveryMs !== 'number' || !(raiseEveryMs > 0))
      throw new ConfigError('RateCap: raiseEveryMs must be a number of ms above 0.')
    const store = options.store
    if (
      store !== undefined &&
      (typeof store?.reserveTurn !== 'function' || typeof store.throttleRate !== 'function')
    )
      throw new ConfigError('RateCap: store must be a RateCapStore (reserveTurn, throttleRate).')
    const name = options.name ?? 'api'
    if (typeof name !== 'string' || name.length === 0 || name.length > 200)
      throw new ConfigError('RateCap: name must be a string of 1 to 200 characters.')
    this.#limits = { ceiling, floor, raiseEveryMs }
    this.#now = options.now ?? Date.now
    this.#sleep = options.sleep ?? sleep
    this.#store = store ?? new MemoryRates()
    this.#name = name
    this.#seen = startRate(this.#limits, this.#now())
  }

  /** Requests a second the cap lets through now (as last seen here, with a shared store). */
  get perSecond(): number {
    this.#seen = raised(this.#seen, this.#limits, this.#now())
    return this.#seen.perSecond
  }

  /**
   * Resolves when the next request may go: turns are given in the order asked. Rejects when
   * the store fails: no request goes past the cap unseen.
   */
  async acquire(): Promise<void> {
    const now = this.#now()
    const turn = await this.#store.reserveTurn(this.#name, this.#limits, now)
    const { floor, ceiling } = this.#limits
    // A store of one's own may answer anything: a rate off the limits is not taken, a turn
    // that is not a number is no wait, and none waits past the longest pause and a spacing.
    if (
      turn.perSecond !== this.#seen.perSecond &&
      turn.perSecond >= floor &&
      turn.perSecond <= ceiling
    )
      this.#seen = { ...this.#seen, perSecond: turn.perSecond, movedAt: now }
    this.counters.requests++
    const at = Number.isFinite(turn.at) ? Math.min(turn.at, latestTurn(this.#limits, now)) : now
    const wait = at - this.#now()
    if (wait > 0) await this.#sleep(wait)
  }

  /**
   * A 429 was answered: the rate is halved, and paused for `retryAfterMs` when given. A store
   * failing here leaves the shared rate as it was (this instance's view is lowered).
   */
  async throttled(retryAfterMs?: number): Promise<void> {
    this.counters.throttled++
    const now = this.#now()
    // What is not a number of ms is no pause (NaN once turned the cap off in the process).
    const pause =
      typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) ? retryAfterMs : undefined
    this.#seen = throttled(this.#seen, this.#limits, now, pause)
    await this.#store.throttleRate(this.#name, this.#limits, now, pause).catch(() => {})
  }

  /**
   * A fetch that waits its turn before each request and lowers the rate on each 429. The wait
   * ends with the request's `signal`: a client's time-out covers the wait for a turn too.
   */
  wrap(fetch: FetchLike): FetchLike {
    return async (input, init) => {
      await untilAborted(this.acquire(), init?.signal ?? undefined)
      const response = await fetch(input, init)
      if (response.status === 429)
        await this.throttled(retryAfterMs(response.headers.get('retry-after'), this.#now()))
      return response
    }
  }
}

/** `waiting`, or its signal's reason once it aborts first (the turn taken is left unused). */
function untilAborted(waiting: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return waiting
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<void>((resolve, reject) => {
    const abort = () => reject(signal.reason)
    signal.addEventListener('abort', abort, { once: true })
    waiting.then(
      () => {
        signal.removeEventListener('abort', abort)
        resolve()
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort)
        reject(error)
      },
    )
  })
}
