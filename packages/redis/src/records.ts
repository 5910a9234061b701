import type { CredentialCipher } from '@scheduling-kit/core'
import { cipherOption, RecordSealer } from '@scheduling-kit/core/store'
import { warnIfEvicting } from './eviction.js'
import {
  checkOptions,
  DEFAULT_PREFIX,
  hashTagged,
  RELEASE_LEASE,
  type RedisClient,
  type RedisStoreOptions,
  takeLease,
} from './scripts.js'

/**
 * A store's records and leases in Redis, for the token and subscription stores (each holds
 * one, privately): a record is a hash (`r` the record, sealed when a cipher is given; `v` its
 * version) at `<prefix><records>:{<key>}`, its lease at `<prefix><leases>:{<key>}`, the braces
 * keeping both in one hash slot on a Redis Cluster.
 */
export class RecordHashes<R extends object> {
  readonly client: RedisClient
  readonly prefix: string
  readonly sealer: RecordSealer<R>

  constructor(
    who: string,
    options: RedisStoreOptions & { cipher?: CredentialCipher },
    kind: 'token' | 'subscription',
    readonly records: string,
    readonly leases: string,
  ) {
    checkOptions(who, options)
    this.client = options.client
    this.prefix = options.prefix ?? DEFAULT_PREFIX
    this.sealer = new RecordSealer(cipherOption(who, options.cipher), kind)
    warnIfEvicting(this.client, options.logger)
  }

  record(key: string): string {
    return `${this.prefix}${this.records}:${hashTagged(key)}`
  }

  lease(key: string): string {
    return `${this.prefix}${this.leases}:${hashTagged(key)}`
  }

  /** The key's record, opened, with its version; `undefined` when there is none. */
  async read(key: string): Promise<(R & { version: number }) | undefined> {
    const [version, json] = await this.client.hmget(this.record(key), 'v', 'r')
    if (json === null || json === undefined) return undefined
    return { ...(await this.sealer.read(key, json)), version: Number(version) }
  }

  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return takeLease(this.client, this.lease(key), owner, ttlMs)
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    await RELEASE_LEASE(this.client, [this.lease(key)], [owner])
  }
}
