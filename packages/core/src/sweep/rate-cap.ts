import { retryAfterMs } from '../api/retry.js'
import { ConfigError } from '../errors/errors.js'
import type { FetchLike } from '../http/fetch.js'
import { sleep } from '../sleep.js'
import { nextSlot, type RateLimits, type RateState, raised, startRate, throttled } from './rate.js'

// The executor of the rate plan (`rate.ts`): requests wait their turn, spaced by the rate;
// each 429 seen lowers it.

export interface RateCapOptions {
  /** The most requests a second (the rate starts there). */
  perSecond: number
  /** The least a run of 429s takes it to. Default a hundredth of `perSecond`. */
  floor?: number
  /** How long without a 429 before the rate is raised a tenth of `perSecond`, in ms. Default 10 000. */
  raiseEveryMs?: number
  /** Clock in ms, and how to wait, for tests. Default `Date.now` and a timer. */
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

/**
 * One request rate for everything given it: `acquire()` before each request, `throttled()` on a
 * 429, or `wrap(fetch)` to do both for every request a client makes. Give the one cap to the
 * subscriptions (`rateCap`), so their sweeps, repairs and lists share it. The cap is this
 * process's: with several instances, divide the app's rate among them.
 *
 * @example
 * ```ts
 * const rateCap = new RateCap({ perSecond: 10 })
 * const subscriptions = createWebhookSubscriptions({ ..., rateCap })
 * ```
 */
export class RateCap {
  readonly #limits: RateLimits
  readonly #now: () => number
  readonly #sleep: (ms: number) => Promise<void>
  #state: RateState
  #last: number | undefined
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
    this.#limits = { ceiling, floor, raiseEveryMs }
    this.#now = options.now ?? Date.now
    this.#sleep = options.sleep ?? sleep
    this.#state = startRate(this.#limits, this.#now())
  }

  /** Requests a second the cap lets through now. */
  get perSecond(): number {
    this.#state = raised(this.#state, this.#limits, this.#now())
    return this.#state.perSecond
  }

  /** Resolves when the next request may go: turns are given in the order asked. */
  async acquire(): Promise<void> {
    const now = this.#now()
    this.#state = raised(this.#state, this.#limits, now)
    const at = nextSlot(this.#state, this.#last, now)
    this.#last = at
    this.counters.requests++
    if (at > now) await this.#sleep(at - now)
  }

  /** A 429 was answered: the rate is halved, and paused for `retryAfterMs` when given. */
  throttled(retryAfterMs?: number): void {
    this.counters.throttled++
    this.#state = throttled(this.#state, this.#limits, this.#now(), retryAfterMs)
  }

  /** A fetch that waits its turn before each request and lowers the rate on each 429. */
  wrap(fetch: FetchLike): FetchLike {
    return async (input, init) => {
      await this.acquire()
      const response = await fetch(input, init)
      if (response.status === 429)
        this.throttled(retryAfterMs(response.headers.get('retry-after'), this.#now()))
      return response
    }
  }
}
