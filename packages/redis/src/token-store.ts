import type {
  CredentialCipher,
  HealthOptions,
  HealthReport,
  ReencryptResult,
  TokenRecord,
  TokenStore,
} from '@scheduling-kit/core'
import { decodeStoreKey } from '@scheduling-kit/core/store'
import { redisHealth } from './health.js'
import compareAndDelete from './lua/token/compare-and-delete.lua'
import compareAndSet from './lua/token/compare-and-set.lua'
import deleteRecord from './lua/token/delete.lua'
import set from './lua/token/set.lua'
import { RecordHashes } from './records.js'
import { type RedisStoreOptions, reencryptRecords, script } from './scripts.js'

export interface RedisTokenStoreOptions extends RedisStoreOptions {
  /**
   * Seals every record (`createCredentialCipher`): the hash holds no token, only a sealed
   * value bound to its key. Records stored before are read, and sealed on their next write
   * or by `reencrypt()`.
   */
  cipher?: CredentialCipher
}

/** How long a deleted record's version is kept, so a write based on a read before the delete fails. */
const TOMBSTONE_MS = 24 * 60 * 60_000

// A record is a hash: `r` the record as JSON, `v` its version. Deleting drops `r` and keeps `v`
// for a day: a compare-and-set from a read made before the delete cannot succeed afterwards
// (./lua/token/).
const SET = script(set)
const COMPARE_AND_SET = script(compareAndSet)
const DELETE = script(deleteRecord)
const COMPARE_AND_DELETE = script(compareAndDelete)
/**
 * A `TokenStore` in Redis with every capability: versioned compare-and-set (no lost update)
 * and the refresh lease (one refresher for all instances). Records never expire: run Redis
 * with `maxmemory-policy noeviction` (the store warns at start-up when it is not).
 *
 * Keys: `<prefix>token:{<key>}` and `<prefix>lease:{<key>}`; the braces keep both in one hash
 * slot on a Redis Cluster.
 *
 * @example
 * ```ts
 * import Redis from 'ioredis'
 * const tokenStore = new RedisTokenStore({ client: new Redis(process.env.REDIS_URL) })
 * app.use('/auth/scheduling', schedulingOAuth({ clientId, clientSecret, redirectUri, tokenStore }))
 * ```
 */
export class RedisTokenStore implements TokenStore {
  readonly #h: RecordHashes<TokenRecord>

  constructor(options: RedisTokenStoreOptions) {
    this.#h = new RecordHashes('RedisTokenStore', options, 'token', 'token', 'lease')
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#h.client, options)
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    return this.#h.read(key)
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    await SET(this.#h.client, [this.#h.record(key)], [await this.#serialize(key, record)])
  }

  async delete(key: string): Promise<void> {
    await DELETE(this.#h.client, [this.#h.record(key), this.#h.lease(key)], [TOMBSTONE_MS])
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    const keys = [this.#h.record(key), this.#h.lease(key)]
    return (await COMPARE_AND_DELETE(this.#h.client, keys, [expectedVersion, TOMBSTONE_MS])) === 1
  }

  async compareAndSet(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    const expected = expectedVersion === undefined ? '' : String(expectedVersion)
    const value = await this.#serialize(key, record)
    return (await COMPARE_AND_SET(this.#h.client, [this.#h.record(key)], [value, expected])) === 1
  }

  /**
   * Seals every record not sealed with the cipher's current key (sealed with an older one,
   * or stored before the cipher was given), in place: its version is kept, and a record a
   * write changes meanwhile is left to that write. Safe while instances serve traffic; run it
   * after making a new key current, then drop the old key once `failed` is empty.
   */
  async reencrypt(): Promise<ReencryptResult> {
    const start = `${this.#h.prefix}token:`
    // `<prefix>token:{<encoded key>}`: the key between the braces.
    return reencryptRecords(this.#h.client, start, this.#h.sealer, async (redisKey) =>
      decodeStoreKey(redisKey.slice(start.length + 1, -1)),
    )
  }

  /** The record as stored, without the version (the hash keeps that): JSON, or sealed. */
  #serialize(key: string, record: TokenRecord): Promise<string> {
    const { version: _, ...rest } = record
    return this.#h.sealer.write(key, rest)
  }

  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#h.acquireLease(key, owner, ttlMs)
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.#h.releaseLease(key, owner)
  }
}
