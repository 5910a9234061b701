import type {
  CredentialCipher,
  HealthOptions,
  HealthReport,
  ReencryptResult,
  StoredSubscription,
  SubscriptionRecord,
  SubscriptionStore,
} from '@scheduling-kit/core'
import { redisHealth } from './health.js'
import compareAndSet from './lua/subscription/compare-and-set.lua'
import deleteRecord from './lua/subscription/delete.lua'
import find from './lua/subscription/find.lua'
import { RecordHashes } from './records.js'
import { scanKeys, scanRead } from './scan.js'
import { RELEASE_LEASE, type RedisStoreOptions, reencryptRecords, script } from './scripts.js'

export interface RedisSubscriptionStoreOptions extends RedisStoreOptions {
  /**
   * Seals every record (`createCredentialCipher`): no webhook secret in the hash, only a
   * sealed value bound to the account's key. Records stored before are read, and sealed on
   * their next write or by `reencrypt()`.
   */
  cipher?: CredentialCipher
}

/** How long a deleted record's version is kept, so a write based on a read before the delete fails. */
const TOMBSTONE_MS = 24 * 60 * 60_000

// A record is a hash: `r` the record as JSON, `v` its version, `i` its webhook ids as JSON, `k`
// the account key (./lua/subscription/).
const COMPARE_AND_SET = script(compareAndSet)
const DELETE = script(deleteRecord)
// A delivery's lookup in one round trip on one server; two on a Cluster (find.lua says why).
const FIND = script(find)

/**
 * A `SubscriptionStore` in Redis: each account's record with compare-and-set on a version,
 * an index from each webhook id to its account, and a lease per account. Index entries are
 * written before the record (a delivery to a webhook just created finds it) and checked
 * against it on every lookup; entries of ids a record dropped are removed after it.
 *
 * Keys: `<prefix>subscription:{<key>}`, `<prefix>subscription-lease:{<key>}`,
 * `<prefix>subscription-webhook:<webhook id>`. Each operation touches one key at a time, so
 * it works on a Redis Cluster; `keys()` scans every master.
 *
 * @example
 * ```ts
 * const store = new RedisSubscriptionStore({ client: new Redis(process.env.REDIS_URL) })
 * const subscriptions = createWebhookSubscriptions({ url, tokens, apiUrl, store })
 * ```
 */
export class RedisSubscriptionStore implements SubscriptionStore {
  readonly #h: RecordHashes<SubscriptionRecord>
  readonly #cluster: boolean

  constructor(options: RedisSubscriptionStoreOptions) {
    this.#h = new RecordHashes(
      'RedisSubscriptionStore',
      options,
      'subscription',
      'subscription',
      'subscription-lease',
    )
    this.#cluster = 'nodes' in this.#h.client && typeof this.#h.client.nodes === 'function'
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#h.client, options)
  }

  /** An index entry's value: the account key and its record's Redis key. */
  #entry(key: string): string {
    return JSON.stringify([key, this.#h.record(key)])
  }

  #index(webhookId: string): string {
    return `${this.#h.prefix}subscription-webhook:${webhookId}`
  }

  async get(key: string): Promise<StoredSubscription | undefined> {
    return this.#h.read(key)
  }

  async compareAndSet(
    key: string,
    record: SubscriptionRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    const ids = record.webhooks.map((w) => w.id)
    // Indexed first: a delivery to a webhook created a moment ago finds its record.
    const value = await this.#h.sealer.write(key, record)
    const entry = this.#entry(key)
    await Promise.all(ids.map((id) => this.#h.client.set(this.#index(id), entry)))
    const old = await COMPARE_AND_SET(
      this.#h.client,
      [this.#h.record(key)],
      [
        value,
        expectedVersion === undefined ? '' : String(expectedVersion),
        JSON.stringify(ids),
        key,
      ],
    )
    if (old === 0) {
      // Refused: unindex what the stored record does not list (it may list some of them).
      const kept = new Set((await this.get(key))?.webhooks.map((w) => w.id))
      await this.#unindex(
        key,
        ids.filter((id) => !kept.has(id)),
      )
      return false
    }
    const now = new Set(ids)
    await this.#unindex(
      key,
      (JSON.parse(String(old)) as string[]).filter((id) => !now.has(id)),
    )
    return true
  }

  async #unindex(key: string, ids: readonly string[]): Promise<void> {
    const entry = this.#entry(key)
    await Promise.all(ids.map((id) => RELEASE_LEASE(this.#h.client, [this.#index(id)], [entry])))
  }

  async delete(key: string, expectedVersion: number): Promise<boolean> {
    const old = await DELETE(
      this.#h.client,
      [this.#h.record(key)],
      [String(expectedVersion), TOMBSTONE_MS],
    )
    if (old === 0) return false
    await this.#unindex(key, JSON.parse(String(old)) as string[])
    return true
  }

  async findByWebhook(
    webhookId: string,
  ): Promise<{ key: string; record: StoredSubscription } | undefined> {
    let key: string
    let version: string | null | undefined
    let json: string | null | undefined
    if (this.#cluster) {
      const entry = await this.#h.client.get(this.#index(webhookId))
      if (entry === null) return undefined
      key = (JSON.parse(entry) as [string, string])[0]
      ;[version, json] = await this.#h.client.hmget(this.#h.record(key), 'v', 'r')
    } else {
      const found = (await FIND(this.#h.client, [this.#index(webhookId)], [])) as
        | [string, string | null, string | null]
        | null
      if (found === null) return undefined
      ;[key, version, json] = found
    }
    if (json === null || json === undefined) return undefined
    const record = { ...(await this.#h.sealer.read(key, json)), version: Number(version) }
    // An index entry is a pointer; the record decides.
    if (!record.webhooks.some((w) => w.id === webhookId)) return undefined
    return { key, record }
  }

  async *keys(): AsyncIterable<string> {
    // SCAN may return a key twice: each is given once.
    const given = new Set<string>()
    for await (const { keys } of scanKeys(this.#h.client, `${this.#h.prefix}subscription:`)) {
      const client = this.#h.client
      const names = await Promise.all(
        keys.map((redisKey) => scanRead(client, () => client.hget(redisKey, 'k'))),
      )
      for (const name of names) {
        if (name === null || given.has(name)) continue
        given.add(name)
        yield name
      }
    }
  }

  /**
   * Seals every record not sealed with the cipher's current key (an older key, or stored
   * before the cipher was given), in place: its version is kept, and a record a write
   * changes meanwhile is left to that write. Safe while instances serve traffic.
   */
  async reencrypt(): Promise<ReencryptResult> {
    return reencryptRecords(
      this.#h.client,
      `${this.#h.prefix}subscription:`,
      this.#h.sealer,
      async (redisKey) => (await this.#h.client.hget(redisKey, 'k')) ?? undefined,
    )
  }

  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.#h.acquireLease(key, owner, ttlMs)
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.#h.releaseLease(key, owner)
  }
}
