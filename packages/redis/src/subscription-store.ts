import type {
  CredentialCipher,
  HealthOptions,
  HealthReport,
  PhaseRange,
  ReencryptResult,
  StoredSubscription,
  SubscriptionRecord,
  SubscriptionStore,
} from '@scheduling-kit/core'
import { decodeStoreKey, encodeStoreKey, inPhases, phaseOf } from '@scheduling-kit/core/store'
import { redisHealth } from './health.js'
import compareAndSet from './lua/subscription/compare-and-set.lua'
import deleteRecord from './lua/subscription/delete.lua'
import find from './lua/subscription/find.lua'
import { PhaseIndex } from './phase-index.js'
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
 * `<prefix>subscription-webhook:<webhook id>`, and the index by sweep phase,
 * `<prefix>subscription-phase:{0}` to `{f}` with `<prefix>subscription-phase-index`. Each
 * operation touches one key at a time, so it works on a Redis Cluster. `keys(phases)` reads
 * only the index's members in the window (a sweep's step reads the accounts due, not every
 * account); `keys()` scans every master, as does a step the first time after an upgrade and
 * once a day after, indexing the records written by older versions.
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
  readonly #phases: PhaseIndex

  constructor(options: RedisSubscriptionStoreOptions) {
    this.#h = new RecordHashes(
      'RedisSubscriptionStore',
      options,
      'subscription',
      'subscription',
      'subscription-lease',
    )
    this.#cluster = 'nodes' in this.#h.client && typeof this.#h.client.nodes === 'function'
    this.#phases = new PhaseIndex(this.#h.client, this.#h.prefix)
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#h.client, options)
  }

  /**
   * An index entry's value: the account key (encoded: Lua's JSON decoder refuses the escape
   * of a lone surrogate) and its record's Redis key.
   */
  #entry(key: string): string {
    return JSON.stringify([encodeStoreKey(key), this.#h.record(key)])
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
    const creating = expectedVersion === undefined
    await Promise.all([
      ...ids.map((id) => this.#h.client.set(this.#index(id), entry)),
      // A new record is in the sweep's index before it exists (a process that dies between
      // leaves no record unswept) and after (a delete racing it cannot take it out).
      ...(creating ? [this.#phases.add(key)] : []),
    ])
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
    await Promise.all([
      this.#unindex(
        key,
        (JSON.parse(String(old)) as string[]).filter((id) => !now.has(id)),
      ),
      ...(creating ? [this.#phases.add(key)] : []),
    ])
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
    await Promise.all([
      this.#unindex(key, JSON.parse(String(old)) as string[]),
      this.#phases.removed(
        key,
        async () => (await this.#h.client.hexists(this.#h.record(key), 'r')) === 1,
      ),
    ])
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
      key = decodeStoreKey((JSON.parse(entry) as [string, string])[0])
      ;[version, json] = await this.#h.client.hmget(this.#h.record(key), 'v', 'r')
    } else {
      const found = (await FIND(this.#h.client, [this.#index(webhookId)], [])) as
        | [string, string | null, string | null]
        | null
      if (found === null) return undefined
      ;[key, version, json] = found
      key = decodeStoreKey(key)
    }
    if (json === null || json === undefined) return undefined
    const record = { ...(await this.#h.sealer.read(key, json)), version: Number(version) }
    // An index entry is a pointer; the record decides.
    if (!record.webhooks.some((w) => w.id === webhookId)) return undefined
    return { key, record }
  }

  /**
   * Every account key with a record, each once; with `phases`, those of the window from the
   * index by phase. While the index is not complete (the first step after an upgrade, then
   * once a day: records an older version wrote), every record is scanned and indexed, and
   * the window's keys given from the scan.
   */
  async *keys(phases?: PhaseRange): AsyncIterable<string> {
    if (phases !== undefined && (await this.#phases.complete())) {
      yield* this.#phases.keys(phases)
      return
    }
    yield* this.#scan(phases)
  }

  /** Every record's key by a scan of every master; with `phases`, indexing each as it goes. */
  async *#scan(phases?: PhaseRange): AsyncIterable<string> {
    // SCAN may return a key twice: each is given once.
    const given = new Set<string>()
    const start = `${this.#h.prefix}subscription:`
    for await (const { keys } of scanKeys(this.#h.client, start)) {
      const client = this.#h.client
      // A record has `k` (a deleted one keeps only its version); the key is read from the
      // Redis key, `<prefix>subscription:{<encoded key>}`, lossless whatever it holds.
      const live = await Promise.all(
        keys.map((redisKey) => scanRead(client, () => client.hget(redisKey, 'k'))),
      )
      const found = keys
        .filter((_, i) => live[i] !== null)
        .map((redisKey) => decodeStoreKey(redisKey.slice(start.length + 1, -1)))
        .filter((name) => !given.has(name))
      for (const name of found) given.add(name)
      if (phases !== undefined) await scanRead(client, () => this.#phases.addAll(found))
      for (const name of found)
        if (phases === undefined || inPhases(phaseOf(name), phases)) yield name
    }
    // Whole: every record written before the scan began is indexed.
    if (phases !== undefined) await this.#phases.markComplete()
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
