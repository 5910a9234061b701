import type {
  HeldRetry,
  RateCapStore,
  RateLimits,
  RateTurn,
  RetryHold,
  RetryStore,
  SweepCheckpoint,
  SweepStore,
} from '@scheduling-kit/core'
import {
  consoleLogger,
  decodeStoreKey,
  encodeStoreKey,
  failuresRead,
  MAX_PAUSE_MS,
  pauseOf,
  serverText,
} from '@scheduling-kit/core/store'
import releaseLease from './lua/lease/release.lua'
import reserveTurn from './lua/rate/reserve.lua'
import throttleRate from './lua/rate/throttle.lua'
import dropRetry from './lua/retry/drop.lua'
import holdRetry from './lua/retry/hold.lua'
import takeRetries from './lua/retry/take.lua'
import setCheckpoint from './lua/sweep/checkpoint.lua'
import {
  checkOptions,
  DEFAULT_PREFIX,
  hashTagged,
  type RedisClient,
  type RedisStoreOptions,
  script,
  takeLease,
} from './scripts.js'

const SET_CHECKPOINT = script(setCheckpoint)
const RELEASE_LEASE = script(releaseLease)
const RESERVE_TURN = script(reserveTurn)
const THROTTLE_RATE = script(throttleRate)
const HOLD_RETRY = script(holdRetry)
const TAKE_RETRIES = script(takeRetries)
const DROP_RETRY = script(dropRetry)

/**
 * A `SweepStore` in Redis, shared by every instance: a shard's lease at
 * `<prefix>sweep-lease:{<shard>}` (`SET NX PX`) and its checkpoint at
 * `<prefix>sweep:{<shard>}` (a hash moved by compare-and-set in one script). Each shard has its
 * own hash tag, so on a Cluster the shards spread over the masters. It keeps the app's request
 * rate too (`RateCapStore`, for `new RateCap({ store })`): a hash at `<prefix>rate:{<name>}`,
 * each turn and 429 one script; and the held tries of work that failed for one account
 * (`RetryStore`): a sorted set by time at `<prefix>retry:{<task>}` and the failures in a row in
 * a hash at `<prefix>retry-failures:{<task>}`, each change one script.
 *
 * @example
 * ```ts
 * const subscriptions = createWebhookSubscriptions({
 *   ...options,
 *   sweep: { store: new RedisSweepStore({ client: redis }), ledger },
 * })
 * ```
 */
export class RedisSweepStore implements SweepStore, RateCapStore, RetryStore {
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #logger: RedisStoreOptions['logger']
  readonly #told = new Set<string>()

  constructor(options: RedisStoreOptions) {
    checkOptions('RedisSweepStore', options)
    this.#client = options.client
    this.#prefix = options.prefix ?? DEFAULT_PREFIX
    this.#logger = options.logger
  }

  // Each name in a hash tag of its own, written losslessly (`hashTagged`): names that differ
  // only in a lone surrogate (a catch-up account's key) stay apart.
  #lease = (name: string) => `${this.#prefix}sweep-lease:${hashTagged(name)}`
  #checkpoint = (name: string) => `${this.#prefix}sweep:${hashTagged(name)}`
  #rate = (name: string) => `${this.#prefix}rate:${hashTagged(name)}`
  #retries = (name: string) => [
    `${this.#prefix}retry:${hashTagged(name)}`,
    `${this.#prefix}retry-failures:${hashTagged(name)}`,
  ]

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return takeLease(this.#client, this.#lease(name), owner, ttlMs)
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await RELEASE_LEASE(this.#client, [this.#lease(name)], [owner])
  }

  async checkpoint(name: string): Promise<SweepCheckpoint | undefined> {
    const key = this.#checkpoint(name)
    const [through, version] = await this.#client.hmget(key, 'through', 'version')
    if (through == null && version == null) return undefined
    const read = { through: Number(through), version: Number(version) }
    // What is not a time and a whole version of at least 1 is none: the next write replaces it
    // (checkpoint.lua reads it so too), told once, never written back.
    if (Number.isFinite(read.through) && Number.isSafeInteger(read.version) && read.version >= 1)
      return read
    // The stored text cleaned (control characters, length): anyone with the store's credentials wrote it.
    this.#tellOnce(
      key,
      `its checkpoint is not a number (through ${serverText(String(through), 40)}, version ${serverText(String(version), 40)})`,
    )
    return undefined
  }

  /** Tells a problem of `key` once in this store's life, with the store and the key. */
  #tellOnce(key: string, problem: string): void {
    if (this.#logger === false || this.#told.has(key) || this.#told.size >= 1_000) return
    this.#told.add(key)
    ;(this.#logger ?? consoleLogger).warn(
      `RedisSweepStore: ${JSON.stringify(key)}: ${problem}; read as none, and the next step's write replaces it.`,
    )
  }

  async setCheckpoint(
    name: string,
    through: number,
    expected: number | undefined,
  ): Promise<number | undefined> {
    const moved = await SET_CHECKPOINT(
      this.#client,
      [this.#checkpoint(name)],
      [through, expected === undefined ? '' : String(expected)],
    )
    return moved === null || moved === undefined ? undefined : Number(moved)
  }

  async reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn> {
    const [at, perSecond] = (await RESERVE_TURN(
      this.#client,
      [this.#rate(name)],
      [limits.ceiling, limits.raiseEveryMs, now, limits.floor, MAX_PAUSE_MS],
    )) as [string, string]
    return { at: Number(at), perSecond: Number(perSecond) }
  }

  async throttleRate(
    name: string,
    limits: RateLimits,
    now: number,
    retryAfterMs: number | undefined,
  ): Promise<void> {
    await THROTTLE_RATE(
      this.#client,
      [this.#rate(name)],
      [limits.ceiling, limits.floor, now, pauseOf(retryAfterMs), MAX_PAUSE_MS],
    )
  }

  async holdRetry(name: string, key: string, at: number, failures: number): Promise<void> {
    await HOLD_RETRY(this.#client, this.#retries(name), [encodeStoreKey(key), at, failures])
  }

  async heldRetry(name: string, key: string): Promise<RetryHold | undefined> {
    const [tries, counts] = this.#retries(name) as [string, string]
    const stored = encodeStoreKey(key)
    const [at, failures] = await Promise.all([
      this.#client.zscore(tries, stored),
      this.#client.hget(counts, stored),
    ])
    if (at === null) return undefined
    return { at: Number(at), failures: failuresRead(failures) }
  }

  async takeRetries(
    name: string,
    now: number,
    limit: number,
    leaseMs: number,
  ): Promise<HeldRetry[]> {
    const taken = (await TAKE_RETRIES(this.#client, this.#retries(name), [
      now,
      Math.max(1, Math.floor(limit)),
      now + leaseMs,
    ])) as string[]
    const tries: HeldRetry[] = []
    for (let i = 0; i + 1 < taken.length; i += 2)
      tries.push({ key: decodeStoreKey(taken[i]!), failures: failuresRead(taken[i + 1]) })
    return tries
  }

  async dropRetry(name: string, key: string): Promise<void> {
    await DROP_RETRY(this.#client, this.#retries(name), [encodeStoreKey(key)])
  }
}
