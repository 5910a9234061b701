import type {
  HealthOptions,
  HealthReport,
  ReencryptResult,
  StoredSubscription,
  SubscriptionRecord,
  SubscriptionStore,
} from '@scheduling-kit/core'
import { postgresHealth } from './health.js'
import {
  DEFAULT_SUBSCRIPTION_TABLE,
  keyOfRow,
  msFromNow,
  PAGE,
  recordParam,
  rowKey,
  type SealedStoreOptions,
} from './sql.js'
import { SealedTable } from './table.js'

export interface PostgresSubscriptionStoreOptions extends SealedStoreOptions {}

const WHO = 'PostgresSubscriptionStore'

/**
 * A `SubscriptionStore` in PostgreSQL: one row per account with its record, its webhook ids
 * (an array column with a GIN index, for the lookup by webhook id), a version for
 * compare-and-set and the account's lease, on the database clock. A deleted record leaves its
 * row's version behind, so a write based on a read from before the delete fails. Run
 * `migrate(pool)` first.
 *
 * @example
 * ```ts
 * await migrate(pool)
 * const store = new PostgresSubscriptionStore({ pool })
 * const subscriptions = createWebhookSubscriptions({ url, tokens, apiUrl, store })
 * ```
 */
export class PostgresSubscriptionStore implements SubscriptionStore {
  readonly #t: SealedTable<SubscriptionRecord>

  constructor(options: PostgresSubscriptionStoreOptions) {
    this.#t = new SealedTable(WHO, options, DEFAULT_SUBSCRIPTION_TABLE, 'subscription')
  }

  /** Whether the database answers and the table's migrations are applied: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return postgresHealth(this.#t.place, options)
  }

  async get(key: string): Promise<StoredSubscription | undefined> {
    return this.#t.read(key)
  }

  async compareAndSet(
    key: string,
    record: SubscriptionRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    const ids = record.webhooks.map((w) => w.id)
    const json = await recordParam(this.#t.sealer, key, record)
    const { rowCount } =
      expectedVersion === undefined
        ? await this.#t.query(
            `INSERT INTO ${this.#t.table} AS t (key, account, record, webhook_ids, version)
             VALUES ($1, $2, $3::jsonb, $4::text[], 1)
             ON CONFLICT (key) DO UPDATE
             SET record = EXCLUDED.record, webhook_ids = EXCLUDED.webhook_ids,
                 account = EXCLUDED.account, version = t.version + 1, updated_at = clock_timestamp()
             WHERE t.record IS NULL`,
            [rowKey(key), key, json, ids],
          )
        : await this.#t.query(
            `UPDATE ${this.#t.table}
             SET record = $2::jsonb, webhook_ids = $3::text[], version = version + 1,
                 updated_at = clock_timestamp()
             WHERE key = $1 AND version = $4 AND record IS NOT NULL`,
            [rowKey(key), json, ids, expectedVersion],
          )
    return rowCount === 1
  }

  async delete(key: string, expectedVersion: number): Promise<boolean> {
    const { rowCount } = await this.#t.query(
      `UPDATE ${this.#t.table}
       SET record = NULL, webhook_ids = '{}', updated_at = clock_timestamp()
       WHERE key = $1 AND version = $2 AND record IS NOT NULL`,
      [rowKey(key), expectedVersion],
    )
    return rowCount === 1
  }

  async findByWebhook(
    webhookId: string,
  ): Promise<{ key: string; record: StoredSubscription } | undefined> {
    const { rows } = await this.#t.query<{
      key: string
      account: string
      record: unknown
      version: number
    }>(
      `SELECT key, account, record, version FROM ${this.#t.table}
       WHERE webhook_ids @> ARRAY[$1::text] AND record IS NOT NULL LIMIT 1`,
      [webhookId],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    // The row key keeps the account's key losslessly (the text column cannot hold a lone
    // surrogate); only a key over 1 KiB, kept as its hash, is read from the column.
    const key = keyOfRow(row.key) ?? row.account
    const record = await this.#t.sealer.read(key, row.record)
    return { key, record: { ...record, version: row.version } }
  }

  async *keys(): AsyncIterable<string> {
    let after = ''
    for (;;) {
      const { rows } = await this.#t.query<{ key: string; account: string }>(
        `SELECT key, account FROM ${this.#t.table}
         WHERE key > $1 AND record IS NOT NULL ORDER BY key LIMIT ${PAGE}`,
        [after],
      )
      for (const row of rows) yield keyOfRow(row.key) ?? row.account
      if (rows.length < PAGE) return
      after = rows.at(-1)!.key
    }
  }

  /**
   * Seals every record not sealed with the cipher's current key (an older key, or stored
   * before the cipher was given), in place: its version is kept, and a row a write changes
   * meanwhile is left to that write. Safe while instances serve traffic.
   */
  async reencrypt(): Promise<ReencryptResult> {
    return this.#t.reencrypt((row) => keyOfRow(row.key) ?? row.account, true)
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.#t.query(
      `INSERT INTO ${this.#t.table} AS t (key, account, lease_owner, lease_expires_at)
       VALUES ($1, $2, $3, ${msFromNow(4)})
       ON CONFLICT (key) DO UPDATE
       SET lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at
       WHERE t.lease_owner IS NULL OR t.lease_owner = EXCLUDED.lease_owner
          OR t.lease_expires_at <= clock_timestamp()`,
      [rowKey(key), key, owner, Math.max(1, Math.ceil(ttlMs))],
    )
    return rowCount === 1
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.#t.releaseLease(key, owner)
  }
}
