import type { TokenRecord, TokenStore } from '@scheduling-kit/core'
import {
  DEFAULT_TOKEN_TABLE,
  msFromNow,
  type PostgresPool,
  type PostgresStoreOptions,
  rowKey,
  run,
  tableOf,
} from './sql.js'

export interface PostgresTokenStoreOptions extends PostgresStoreOptions {}

const WHO = 'PostgresTokenStore'

/** The record as JSON, without the version (a column keeps that). */
function serialize(record: TokenRecord): string {
  const { version: _, ...rest } = record
  return JSON.stringify(rest)
}

/**
 * A `TokenStore` in PostgreSQL with every capability: compare-and-set on a version column
 * (`UPDATE ... WHERE version = $n`: no lost update) and the refresh lease as columns of the
 * row, with an expiry on the database clock (one refresher for all instances; no session
 * advisory lock, which pgbouncer in transaction mode would break). Run `migrate(pool)` first.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const tokenStore = new PostgresTokenStore({ pool })
 * ```
 */
export class PostgresTokenStore implements TokenStore {
  readonly #pool: PostgresPool
  readonly #table: string

  constructor(options: PostgresTokenStoreOptions) {
    this.#table = tableOf(WHO, options, DEFAULT_TOKEN_TABLE)
    this.#pool = options.pool
  }

  #query<Row>(text: string, values: unknown[]) {
    return run<Row>(this.#pool, WHO, this.#table, text, values)
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    const { rows } = await this.#query<{ record: TokenRecord; version: number }>(
      `SELECT record, version FROM ${this.#table} WHERE key = $1 AND record IS NOT NULL`,
      [rowKey(key)],
    )
    const row = rows[0]
    return row === undefined ? undefined : { ...row.record, version: row.version }
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table} AS t (key, record, version) VALUES ($1, $2::jsonb, 1)
       ON CONFLICT (key) DO UPDATE
       SET record = EXCLUDED.record, version = t.version + 1, updated_at = clock_timestamp()`,
      [rowKey(key), serialize(record)],
    )
  }

  /** Removes the record and its lease; the row stays, with its version, until `prune()`. */
  async delete(key: string): Promise<void> {
    await this.#query(
      `UPDATE ${this.#table}
       SET record = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
       WHERE key = $1`,
      [rowKey(key)],
    )
  }

  async compareAndSet(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    const { rowCount } =
      expectedVersion === undefined
        ? await this.#query(
            `INSERT INTO ${this.#table} AS t (key, record, version) VALUES ($1, $2::jsonb, 1)
             ON CONFLICT (key) DO UPDATE
             SET record = EXCLUDED.record, version = t.version + 1, updated_at = clock_timestamp()
             WHERE t.record IS NULL`,
            [rowKey(key), serialize(record)],
          )
        : await this.#query(
            `UPDATE ${this.#table}
             SET record = $2::jsonb, version = version + 1, updated_at = clock_timestamp()
             WHERE key = $1 AND version = $3 AND record IS NOT NULL`,
            [rowKey(key), serialize(record), expectedVersion],
          )
    return rowCount === 1
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.#query(
      `INSERT INTO ${this.#table} AS t (key, lease_owner, lease_expires_at) VALUES ($1, $2, ${msFromNow(3)})
       ON CONFLICT (key) DO UPDATE
       SET lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at
       WHERE t.lease_owner IS NULL OR t.lease_owner = EXCLUDED.lease_owner
          OR t.lease_expires_at <= clock_timestamp()`,
      [rowKey(key), owner, Math.max(1, Math.ceil(ttlMs))],
    )
    return rowCount === 1
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    await this.#query(
      `UPDATE ${this.#table} SET lease_owner = NULL, lease_expires_at = NULL
       WHERE key = $1 AND lease_owner = $2`,
      [rowKey(key), owner],
    )
  }

  /**
   * Removes rows with no record and no live lease, deleted more than `olderThanMs` ago
   * (default a day: long enough that no refresh begun before the delete is still running).
   * Resolves to the number of rows removed. Run it now and then (a daily job).
   */
  async prune(olderThanMs = 24 * 60 * 60_000): Promise<number> {
    const { rowCount } = await this.#query(
      `DELETE FROM ${this.#table}
       WHERE record IS NULL
         AND (lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp())
         AND updated_at <= clock_timestamp() - $1 * interval '1 millisecond'`,
      [olderThanMs],
    )
    return rowCount
  }
}
