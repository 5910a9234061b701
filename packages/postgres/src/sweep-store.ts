import type { SweepCheckpoint, SweepStore } from '@scheduling-kit/core'
import {
  DEFAULT_SUBSCRIPTION_TABLE,
  msFromNow,
  type PostgresPool,
  run,
  sweepsTableName,
  tableOf,
} from './sql.js'

export interface PostgresSweepStoreOptions {
  pool: PostgresPool
  /** The schema `migrate` was given. Default `public`. */
  schema?: string
  /** The subscriptions table `migrate` made (`subscriptionTable`): the shards live beside it. */
  table?: string
}

const WHO = 'PostgresSweepStore'

/**
 * A `SweepStore` in PostgreSQL, shared by every instance: one row per shard in
 * `<subscriptions table>$sweeps` (`subscriptions@3`) with its lease (on the database clock) and
 * its checkpoint, moved by compare-and-set on a version. Run `migrate(pool)` first.
 *
 * @example
 * ```ts
 * const subscriptions = createWebhookSubscriptions({
 *   ...options,
 *   sweep: { store: new PostgresSweepStore({ pool }), ledger },
 * })
 * ```
 */
export class PostgresSweepStore implements SweepStore {
  readonly #pool: PostgresPool
  readonly #table: string
  readonly #place: string

  constructor(options: PostgresSweepStoreOptions) {
    this.#place = tableOf(WHO, options, DEFAULT_SUBSCRIPTION_TABLE)
    this.#pool = options.pool
    const schema = this.#place.slice(0, this.#place.lastIndexOf('.'))
    this.#table = `${schema}.${sweepsTableName(options.table ?? DEFAULT_SUBSCRIPTION_TABLE)}`
  }

  #query<Row>(text: string, values: unknown[]) {
    return run<Row>(this.#pool, WHO, this.#table, text, values)
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.#query(
      `INSERT INTO ${this.#table} AS t (name, lease_owner, lease_expires_at)
       VALUES ($1, $2, ${msFromNow(3)})
       ON CONFLICT (name) DO UPDATE
       SET lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at
       WHERE t.lease_owner IS NULL OR t.lease_owner = EXCLUDED.lease_owner
          OR t.lease_expires_at <= clock_timestamp()`,
      [name, owner, Math.max(1, Math.ceil(ttlMs))],
    )
    return rowCount === 1
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.#query(
      `UPDATE ${this.#table} SET lease_owner = NULL, lease_expires_at = NULL
       WHERE name = $1 AND lease_owner = $2`,
      [name, owner],
    )
  }

  async checkpoint(name: string): Promise<SweepCheckpoint | undefined> {
    const { rows } = await this.#query<{ through: string; version: number }>(
      `SELECT through, version FROM ${this.#table} WHERE name = $1 AND through IS NOT NULL`,
      [name],
    )
    const row = rows[0]
    return row === undefined ? undefined : { through: Number(row.through), version: row.version }
  }

  async setCheckpoint(
    name: string,
    through: number,
    expected: number | undefined,
  ): Promise<number | undefined> {
    // Version 0 is a shard with no checkpoint yet (a row its lease made, or none).
    const { rows } =
      expected === undefined
        ? await this.#query<{ version: number }>(
            `INSERT INTO ${this.#table} AS t (name, through, version) VALUES ($1, $2, 1)
             ON CONFLICT (name) DO UPDATE SET through = EXCLUDED.through, version = 1
             WHERE t.version = 0
             RETURNING version`,
            [name, through],
          )
        : await this.#query<{ version: number }>(
            `UPDATE ${this.#table} SET through = $2, version = version + 1
             WHERE name = $1 AND version = $3
             RETURNING version`,
            [name, through, expected],
          )
    return rows[0]?.version
  }
}
