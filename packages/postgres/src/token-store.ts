import type {
  HealthOptions,
  HealthReport,
  ReencryptResult,
  TokenRecord,
  TokenStore,
} from '@scheduling-kit/core'
import { postgresHealth } from './health.js'
import {
  DEFAULT_TOKEN_TABLE,
  keyOfRow,
  msFromNow,
  recordParam,
  rowKey,
  type SealedStoreOptions,
} from './sql.js'
import { SealedTable } from './table.js'

export interface PostgresTokenStoreOptions extends SealedStoreOptions {}

const WHO = 'PostgresTokenStore'

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
  readonly #t: SealedTable<TokenRecord>

  constructor(options: PostgresTokenStoreOptions) {
    this.#t = new SealedTable(WHO, options, DEFAULT_TOKEN_TABLE, 'token')
  }

  /** Whether the database answers and the table's migrations are applied: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return postgresHealth(this.#t.place, options)
  }

  /** The record as the `record` parameter, without the version (a column keeps that). */
  #param(key: string, record: TokenRecord): Promise<string> {
    const { version: _, ...rest } = record
    return recordParam(this.#t.sealer, key, rest)
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    return this.#t.read(key)
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    await this.#t.query(
      `INSERT INTO ${this.#t.table} AS t (key, record, version) VALUES ($1, $2::jsonb, 1)
       ON CONFLICT (key) DO UPDATE
       SET record = EXCLUDED.record, version = t.version + 1, updated_at = clock_timestamp()`,
      [rowKey(key), await this.#param(key, record)],
    )
  }

  /** Removes the record and its lease; the row stays, with its version, until `prune()`. */
  async delete(key: string): Promise<void> {
    await this.#t.query(
      `UPDATE ${this.#t.table}
       SET record = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
       WHERE key = $1`,
      [rowKey(key)],
    )
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    const { rowCount } = await this.#t.query(
      `UPDATE ${this.#t.table}
       SET record = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
       WHERE key = $1 AND version = $2 AND record IS NOT NULL`,
      [rowKey(key), expectedVersion],
    )
    return rowCount === 1
  }

  async compareAndSet(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    const param = await this.#param(key, record)
    const { rowCount } =
      expectedVersion === undefined
        ? await this.#t.query(
            `INSERT INTO ${this.#t.table} AS t (key, record, version) VALUES ($1, $2::jsonb, 1)
             ON CONFLICT (key) DO UPDATE
             SET record = EXCLUDED.record, version = t.version + 1, updated_at = clock_timestamp()
             WHERE t.record IS NULL`,
            [rowKey(key), await this.#param(key, record)],
          )
        : await this.#t.query(
            `UPDATE ${this.#t.table}
             SET record = $2::jsonb, version = version + 1, updated_at = clock_timestamp()
             WHERE key = $1 AND version = $3 AND record IS NOT NULL`,
            [rowKey(key), param, expectedVersion],
          )
    return rowCount === 1
  }

  /**
   * Seals every record not sealed with the cipher's current key (an older key, or stored
   * before the cipher was given), in place: its version is kept, and a row a write changes
   * meanwhile is left to that write. Safe while instances serve traffic. A row whose key is
   * over 1 KiB keeps only the key's hash, so it is skipped here and sealed on its next write.
   */
  async reencrypt(): Promise<ReencryptResult> {
    return this.#t.reencrypt((row) => keyOfRow(row.key), false)
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const { rowCount } = await this.#t.query(
      `INSERT INTO ${this.#t.table} AS t (key, lease_owner, lease_expires_at) VALUES ($1, $2, ${msFromNow(3)})
       ON CONFLICT (key) DO UPDATE
       SET lease_owner = EXCLUDED.lease_owner, lease_expires_at = EXCLUDED.lease_expires_at
       WHERE t.lease_owner IS NULL OR t.lease_owner = EXCLUDED.lease_owner
          OR t.lease_expires_at <= clock_timestamp()`,
      [rowKey(key), owner, Math.max(1, Math.ceil(ttlMs))],
    )
    return rowCount === 1
  }

  /**
   * Removes rows with no record and no live lease, deleted more than `olderThanMs` ago
   * (default a day: long enough that no refresh begun before the delete is still running).
   * Resolves to the number of rows removed. Run it now and then (a daily job).
   */
  async prune(olderThanMs = 24 * 60 * 60_000): Promise<number> {
    const { rowCount } = await this.#t.query(
      `DELETE FROM ${this.#t.table}
       WHERE record IS NULL
         AND (lease_expires_at IS NULL OR lease_expires_at <= clock_timestamp())
         AND updated_at <= clock_timestamp() - $1 * interval '1 millisecond'`,
      [olderThanMs],
    )
    return rowCount
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return this.#t.releaseLease(key, owner)
  }
}
