import type {
  HealthOptions,
  HealthReport,
  PhaseRange,
  ReencryptResult,
  StoredSubscription,
  SubscriptionRecord,
  SubscriptionStore,
} from '@scheduling-kit/core'
import { PHASES, phaseOf } from '@scheduling-kit/core/store'
import { postgresHealth } from './health.js'
import {
  DEFAULT_SUBSCRIPTION_TABLE,
  keyOfRow,
  msFromNow,
  PAGE,
  recordParam,
  rowKey,
  type SealedStoreOptions,
  webhookIndexName,
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

  /** The index from each webhook id to its row's key (see `migrate`). */
  readonly #byWebhook: string

  constructor(options: PostgresSubscriptionStoreOptions) {
    this.#t = new SealedTable(WHO, options, DEFAULT_SUBSCRIPTION_TABLE, 'subscription')
    const schema = this.#t.table.slice(0, this.#t.table.lastIndexOf('.'))
    this.#byWebhook = `${schema}.${webhookIndexName(options.table ?? DEFAULT_SUBSCRIPTION_TABLE)}`
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
    const write =
      expectedVersion === undefined
        ? `INSERT INTO ${this.#t.table} AS t
             (key, account, record, webhook_ids, version, sweep_phase)
           VALUES ($1, $2, $3::jsonb, $4::text[], 1, $5::bigint)
           ON CONFLICT (key) DO UPDATE
           SET record = EXCLUDED.record, webhook_ids = EXCLUDED.webhook_ids,
               account = EXCLUDED.account, version = t.version + 1, updated_at = clock_timestamp(),
               sweep_phase = EXCLUDED.sweep_phase
           WHERE t.record IS NULL
           RETURNING key`
        : `UPDATE ${this.#t.table}
           SET record = $3::jsonb, webhook_ids = $4::text[], version = version + 1,
               updated_at = clock_timestamp()
           WHERE key = $1 AND version = $5::integer AND record IS NOT NULL AND $2::text IS NOT NULL
           RETURNING key`
    // The record and its index entries in one statement: both change, or neither.
    const { rows } = await this.#t.query<{ written: number }>(
      `WITH written AS (${write}),
       dropped AS (
         DELETE FROM ${this.#byWebhook}
         WHERE key = $1 AND NOT (webhook_id = ANY($4::text[])) AND EXISTS (SELECT 1 FROM written)
       ),
       indexed AS (
         INSERT INTO ${this.#byWebhook} (webhook_id, key)
         SELECT id, $1 FROM unnest($4::text[]) AS id WHERE EXISTS (SELECT 1 FROM written)
         ON CONFLICT (webhook_id) DO UPDATE SET key = EXCLUDED.key
       )
       SELECT count(*)::int AS written FROM written`,
      expectedVersion === undefined
        ? [rowKey(key), key, json, ids, phaseOf(key)]
        : [rowKey(key), key, json, ids, expectedVersion],
    )
    return rows[0]?.written === 1
  }

  async delete(key: string, expectedVersion: number): Promise<boolean> {
    const { rows } = await this.#t.query<{ deleted: number }>(
      `WITH deleted AS (
         UPDATE ${this.#t.table}
         SET record = NULL, webhook_ids = '{}', updated_at = clock_timestamp()
         WHERE key = $1 AND version = $2 AND record IS NOT NULL
         RETURNING key
       ),
       dropped AS (
         DELETE FROM ${this.#byWebhook} WHERE key = $1 AND EXISTS (SELECT 1 FROM deleted)
       )
       SELECT count(*)::int AS deleted FROM deleted`,
      [rowKey(key), expectedVersion],
    )
    return rows[0]?.deleted === 1
  }

  async findByWebhook(
    webhookId: string,
  ): Promise<{ key: string; record: StoredSubscription } | undefined> {
    // One probe of the index's primary key, then the row by its own.
    const { rows } = await this.#t.query<{
      key: string
      account: string
      record: unknown
      version: number
    }>(
      `SELECT t.key, t.account, t.record, t.version
       FROM ${this.#byWebhook} AS i JOIN ${this.#t.table} AS t ON t.key = i.key
       WHERE i.webhook_id = $1 AND t.record IS NOT NULL`,
      [webhookId],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    // The row key keeps the account's key losslessly (the text column cannot hold a lone
    // surrogate); only a key over 1 KiB, kept as its hash, is read from the column.
    const key = keyOfRow(row.key) ?? row.account
    const record = await this.#t.sealer.read(key, row.record)
    // An index entry is a pointer; the record decides.
    if (!record.webhooks.some((w) => w.id === webhookId)) return undefined
    return { key, record: { ...record, version: row.version } }
  }

  /**
   * Every key, by key; with `phases`, those whose phase falls in it, from the index by phase
   * (rows without one given theirs first).
   */
  async *keys(phases?: PhaseRange): AsyncIterable<string> {
    if (phases !== undefined) {
      await this.#givePhases()
      // Phases are whole numbers: p >= from is p >= ceil(from), p < to is p < ceil(to).
      const [from, to] = [phases.from, phases.to].map((p) =>
        Math.min(PHASES, Math.max(0, Math.ceil(p))),
      ) as [number, number]
      const wraps = from > to
      yield* this.#keysInPhases(from, wraps ? PHASES : to)
      if (wraps) yield* this.#keysInPhases(0, to)
      return
    }
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

  /** The keys of phases from `from` up to `to`, a page at a time by (phase, key). */
  async *#keysInPhases(from: number, to: number): AsyncIterable<string> {
    let after: [number, string] = [from - 1, '']
    for (;;) {
      const { rows } = await this.#t.query<{ key: string; account: string; phase: string }>(
        `SELECT key, account, sweep_phase AS phase FROM ${this.#t.table}
         WHERE record IS NOT NULL AND sweep_phase >= $1 AND sweep_phase < $2
           AND (sweep_phase, key) > ($3::bigint, $4::text)
         ORDER BY sweep_phase, key LIMIT ${PAGE}`,
        [from, to, after[0], after[1]],
      )
      for (const row of rows) yield keyOfRow(row.key) ?? row.account
      if (rows.length < PAGE) return
      const last = rows.at(-1)!
      after = [Number(last.phase), last.key]
    }
  }

  /** Gives rows written without a phase theirs, a page at a time (none once all have one). */
  async #givePhases(): Promise<void> {
    for (;;) {
      const { rows } = await this.#t.query<{ key: string; account: string }>(
        `SELECT key, account FROM ${this.#t.table}
         WHERE record IS NOT NULL AND sweep_phase IS NULL LIMIT ${PAGE}`,
        [],
      )
      if (rows.length === 0) return
      await this.#t.query(
        `UPDATE ${this.#t.table} AS t SET sweep_phase = v.phase
         FROM unnest($1::text[], $2::bigint[]) AS v(key, phase)
         WHERE t.key = v.key AND t.sweep_phase IS NULL`,
        [rows.map((r) => r.key), rows.map((r) => phaseOf(keyOfRow(r.key) ?? r.account))],
      )
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
