import { cipherOption, RecordSealer } from '../credentials/sealed.js'
import type { CredentialCipher } from '../credentials/types.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import { memoryHealth } from '../health/report.js'
import { inPhases, type PhaseRange, phaseOf } from '../sweep/schedule.js'
import type { ConnectionApp } from '../tokens/record.js'

/** One webhook this app created for an account, with the secret the service gave it. */
export interface SubscribedWebhook {
  /** `wh_...` */
  id: string
  /** The signing secret, as the create answered it (lists never show it again). */
  secret: string
  /** Where it sends deliveries. */
  url: string
  /** When it was created, ms since the epoch. */
  createdAt: number
  /**
   * When this app retired it (rotated away, repaired, or the account removed), ms since the
   * epoch. Its deliveries still verify for the grace period after.
   */
  removedAt?: number
  /** The service confirmed it is gone (deleted, or not found): nothing is left to delete. */
  gone?: boolean
  /** The service account it was created in (when the token manager told it). */
  accountId?: string
}

/** What the subscriptions keep per account. */
export interface SubscriptionRecord {
  /** Whether the account should have a webhook: false once `remove` ran (disconnected). */
  active: boolean
  /** Its webhooks, the live one(s) and the retired ones still in their grace period. */
  webhooks: SubscribedWebhook[]
  /** Last change, ms since the epoch. */
  updatedAt: number
  /**
   * The service account the key is connected to, as of the last `ensure`: webhooks of another
   * account (the key was connected to another one before) run no handlers.
   */
  accountId?: string
  /**
   * A create may have landed without its answer: the next `ensure` lists the account's webhooks
   * before it creates one, so none is left at the service that nobody has the secret of.
   */
  uncertain?: boolean
  /** The app the record was made for: `reconcile` leaves records of another app alone. */
  app?: ConnectionApp
}

/** A record as read from a store, with the version a compare-and-set names. */
export interface StoredSubscription extends SubscriptionRecord {
  version: number
}

/**
 * Where subscriptions live: one record per account key, found also by any webhook id it
 * lists, written only by compare-and-set, with a lease per account so one instance at a time
 * changes an account's webhooks. `MemorySubscriptionStore` (one process),
 * `RedisSubscriptionStore` and `PostgresSubscriptionStore` (many) implement it; every one
 * passes `runSubscriptionStoreConformance` from `@scheduling-kit/testing`.
 */
export interface SubscriptionStore {
  /**
   * Whether what the store depends on answers (see `checkHealth`), for a readiness route.
   * Optional: a store without it is left out of the handler's `health()`.
   */
  health?(options?: HealthOptions): Promise<HealthReport>
  get(key: string): Promise<StoredSubscription | undefined>
  /**
   * Writes `record` when the stored version is `expectedVersion` (`undefined`: only when no
   * record is stored); resolves to whether it was written. The webhook ids the record lists
   * then find it (`findByWebhook`); ids it no longer lists do not.
   */
  compareAndSet(
    key: string,
    record: SubscriptionRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean>
  /** Deletes the record when its version is `expectedVersion`; resolves to whether it did. */
  delete(key: string, expectedVersion: number): Promise<boolean>
  /** The record that lists this webhook id, and its account key. */
  findByWebhook(webhookId: string): Promise<{ key: string; record: StoredSubscription } | undefined>
  /**
   * Every account key with a record, each once. With `phases`: at least the keys whose phase
   * (`phaseOf(key)` of `@scheduling-kit/core/store`) falls in it, each once, so a sweep's step
   * reads only its window's keys; a store may give more (they are passed over), so one that
   * ignores `phases` is correct, and reads every key each step.
   */
  keys(phases?: PhaseRange): AsyncIterable<string>
  /** Takes (or, for its owner, extends) the account's lease for `ttlMs`; false when another holds it. */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>
  /** Gives the lease up, if `owner` still holds it. */
  releaseLease(key: string, owner: string): Promise<void>
}

/** A record as written: its fields checked and copied, so a caller's later change cannot reach a store. */
export function copyRecord(record: SubscriptionRecord): SubscriptionRecord {
  const copy: SubscriptionRecord = {
    active: record.active,
    updatedAt: record.updatedAt,
    webhooks: record.webhooks.map((w) => ({ ...w })),
  }
  if (record.accountId !== undefined) copy.accountId = record.accountId
  if (record.uncertain === true) copy.uncertain = true
  if (record.app !== undefined) copy.app = { ...record.app }
  return copy
}

/**
 * Subscriptions in this process's memory: for one instance, tests and the demo. Several
 * instances need `RedisSubscriptionStore` or `PostgresSubscriptionStore`.
 */
export interface MemorySubscriptionStoreOptions {
  /** Seals each record (`createCredentialCipher`) as the shared stores do: to try a set-up in tests. */
  cipher?: CredentialCipher
}

export class MemorySubscriptionStore implements SubscriptionStore {
  /** Always ready: it lives in this process (and only there). */
  health(): Promise<HealthReport> {
    return Promise.resolve(memoryHealth())
  }

  // Each record with the ids of its webhooks; the record itself sealed when there is a cipher.
  readonly #records = new Map<
    string,
    { value: SubscriptionRecord | string; ids: string[]; version: number }
  >()
  readonly #byWebhook = new Map<string, string>()
  readonly #leases = new Map<string, { owner: string; until: number }>()
  readonly #sealer: RecordSealer<SubscriptionRecord> | undefined

  constructor(options: MemorySubscriptionStoreOptions = {}) {
    const cipher = cipherOption('MemorySubscriptionStore', options.cipher)
    this.#sealer = cipher === undefined ? undefined : new RecordSealer(cipher, 'subscription')
  }

  async get(key: string): Promise<StoredSubscription | undefined> {
    const found = this.#records.get(key)
    if (found === undefined) return undefined
    const record =
      this.#sealer === undefined
        ? copyRecord(found.value as SubscriptionRecord)
        : await this.#sealer.read(key, found.value)
    return { ...record, version: found.version }
  }

  async compareAndSet(
    key: string,
    record: SubscriptionRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    if (this.#records.get(key)?.version !== expectedVersion) return false
    const copy = copyRecord(record)
    const value = this.#sealer === undefined ? copy : await this.#sealer.write(key, copy)
    // Sealing awaited: the version is checked again, so the write stays atomic.
    const current = this.#records.get(key)
    if (current?.version !== expectedVersion) return false
    for (const id of current?.ids ?? []) this.#byWebhook.delete(id)
    const ids = copy.webhooks.map((w) => w.id)
    this.#records.set(key, { value, ids, version: (current?.version ?? 0) + 1 })
    for (const id of ids) this.#byWebhook.set(id, key)
    return true
  }

  async delete(key: string, expectedVersion: number): Promise<boolean> {
    const current = this.#records.get(key)
    if (current === undefined || current.version !== expectedVersion) return false
    for (const id of current.ids) this.#byWebhook.delete(id)
    this.#records.delete(key)
    return true
  }

  async findByWebhook(
    webhookId: string,
  ): Promise<{ key: string; record: StoredSubscription } | undefined> {
    const key = this.#byWebhook.get(webhookId)
    if (key === undefined) return undefined
    const record = await this.get(key)
    return record === undefined ? undefined : { key, record }
  }

  async *keys(phases?: PhaseRange): AsyncIterable<string> {
    const keys = [...this.#records.keys()]
    yield* phases === undefined ? keys : keys.filter((key) => inPhases(phaseOf(key), phases))
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const held = this.#leases.get(key)
    if (held !== undefined && held.owner !== owner && held.until > now) return false
    this.#leases.set(key, { owner, until: now + ttlMs })
    return true
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    if (this.#leases.get(key)?.owner === owner) this.#leases.delete(key)
  }
}
