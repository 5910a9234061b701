import type { ClaimResult, DedupeStore, HealthOptions, HealthReport } from '@scheduling-kit/core'
import { encodeStoreKey, wholeNumber } from '@scheduling-kit/core/store'
import { warnIfEvicting } from './eviction.js'
import { redisHealth } from './health.js'
import claim from './lua/dedupe/claim.lua'
import complete from './lua/dedupe/complete.lua'
import extend from './lua/dedupe/extend.lua'
import release from './lua/dedupe/release.lua'
import {
  checkOptions,
  DEFAULT_PREFIX,
  type RedisClient,
  type RedisStoreOptions,
  script,
} from './scripts.js'

export interface RedisDedupeStoreOptions extends RedisStoreOptions {
  /**
   * How long a claim lasts if its holder never completes nor releases it, in ms: `extend()`
   * renews it while the handlers run. Default 60 000.
   */
  leaseMs?: number
  /** How long a completed key is remembered, in ms. Default 24 hours. */
  ttlMs?: number
}

// A claim is the value `c:<owner>` with the lease as its expiry; a completion `d:<owner>`
// with the completion time. Each operation is one script (./lua/dedupe/): atomic for its key.
const CLAIM = script(claim)
const COMPLETE = script(complete)
const EXTEND = script(extend)
const RELEASE = script(release)

function positiveMs(value: number | undefined, fallback: number, name: string): number {
  return wholeNumber('RedisDedupeStore', name, value, fallback, { unit: 'ms' })
}

/**
 * A `DedupeStore` in Redis, shared by every instance: a retried delivery runs its handlers
 * once, whichever instance it reaches. Also fits the OAuth routes' `stateStore`.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis'
 * const redis = new Redis(process.env.REDIS_URL)
 * app.use(schedulingWebhooks({ secret, dedupe: new RedisDedupeStore({ client: redis }) }))
 * ```
 */
export class RedisDedupeStore implements DedupeStore {
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #leaseMs: number
  readonly #ttlMs: number

  constructor(options: RedisDedupeStoreOptions) {
    checkOptions('RedisDedupeStore', options)
    this.#client = options.client
    this.#prefix = `${options.prefix ?? DEFAULT_PREFIX}dedupe:`
    this.#leaseMs = positiveMs(options.leaseMs, 60_000, 'leaseMs')
    this.#ttlMs = positiveMs(options.ttlMs, 24 * 60 * 60_000, 'ttlMs')
    warnIfEvicting(this.#client, options.logger)
  }

  /** How long a completed key is remembered, in ms (option `ttlMs`). */
  get ttlMs(): number {
    return this.#ttlMs
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#client, options)
  }

  async claim(key: string, owner: string): Promise<ClaimResult> {
    return (await CLAIM(
      this.#client,
      [this.#prefix + encodeStoreKey(key)],
      [owner, this.#leaseMs],
    )) as ClaimResult
  }

  async complete(key: string, owner: string): Promise<void> {
    await COMPLETE(this.#client, [this.#prefix + encodeStoreKey(key)], [owner, this.#ttlMs])
  }

  /** Renews `owner`'s claim for `leaseMs` while its handler runs; `false` when it no longer holds it. */
  async extend(key: string, owner: string): Promise<boolean> {
    const ms = this.#leaseMs
    const pexpire = Math.max(1, Math.ceil(ms))
    return (
      (await EXTEND(this.#client, [this.#prefix + encodeStoreKey(key)], [owner, pexpire])) === 1
    )
  }

  async release(key: string, owner: string): Promise<void> {
    await RELEASE(this.#client, [this.#prefix + encodeStoreKey(key)], [owner])
  }
}
