import type { ClaimResult, DedupeStore, HealthOptions, HealthReport } from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import { wholeNumber } from '@scheduling-kit/core/store'
import { postgresHealth, type TablePlace } from './health.js'
import {
  DEFAULT_DEDUPE_TABLE,
  msFromNow,
  type PostgresPool,
  type PostgresStoreOptions,
  rowKey,
  run,
  tableOf,
} from './sql.js'

export interface PostgresDedupeStoreOptions extends PostgresStoreOptions {
  /**
   * How long a claim lasts if its holder never completes nor releases it, in ms: `extend()`
   * renews it while the handlers run. Default 60 000.
   */
  leaseMs?: number
  /** How long a completed key is remembered, in ms. Default 24 hours. */
  ttlMs?: number
  /**
   * Expired rows are deleted without the app's help, amortised on claims: at most once per
   * `everyMs` (default 60 000) a claim starts a sweep in the background that deletes up to
   * `batch` expired rows (default 5 000) by the expiry index, and goes on while batches come
   * back full (up to 20 in a sweep). Concurrent sweeps of several instances skip each other's
   * rows (`SKIP LOCKED`). A failed sweep is dropped: the next one catches up. `false` turns it
   * off (then call `prune()` yourself).
   */
  autoPrune?: false | { everyMs?: number; batch?: number }
}

/** Batches of one sweep, at most: a backlog is worked off over several claims, never in one. */
const MAX_BATCHES = 20

const WHO = 'PostgresDedupeStore'

function positiveMs(value: number | undefined, fallback: number, name: string): number {
  return wholeNumber(WHO, name, value, fallback, { unit: 'ms' })
}

/**
 * A `DedupeStore` in PostgreSQL, shared by every instance: a claim is a row, in progress until
 * its lease ends on the database clock, then completed until its time is up. Also fits the
 * OAuth routes' `stateStore`. Run `migrate(pool)` first. Expired rows are deleted in the
 * background, amortised on claims (`autoPrune`), so the table stays the size of the last
 * `ttlMs` of deliveries.
 *
 * @example
 * ```ts
 * await migrate(pool)
 * app.use(schedulingWebhooks({ secret, dedupe: new PostgresDedupeStore({ pool }) }))
 * ```
 */
export class PostgresDedupeStore implements DedupeStore {
  readonly #pool: PostgresPool
  readonly #table: string
  readonly #leaseMs: number
  readonly #ttlMs: number
  readonly #pruneEveryMs: number | undefined
  readonly #pruneBatch: number
  /** When the last sweep started (`performance.now()`), and whether one is running. */
  #prunedAt = Number.NEGATIVE_INFINITY
  #pruning: Promise<void> | undefined

  readonly #place: TablePlace

  constructor(options: PostgresDedupeStoreOptions) {
    this.#table = tableOf(WHO, options, DEFAULT_DEDUPE_TABLE)
    this.#place = {
      pool: options.pool,
      schema: options.schema,
      table: options.table ?? DEFAULT_DEDUPE_TABLE,
      kind: 'dedupe',
    }
    this.#pool = options.pool
    this.#leaseMs = positiveMs(options.leaseMs, 60_000, 'leaseMs')
    this.#ttlMs = positiveMs(options.ttlMs, 24 * 60 * 60_000, 'ttlMs')
    const auto = options.autoPrune
    if (auto !== undefined && auto !== false && (typeof auto !== 'object' || auto === null)) {
      throw new ConfigError(
        `${WHO}: autoPrune must be false or { everyMs?, batch? }, got ${String(auto)}.`,
      )
    }
    this.#pruneEveryMs =
      auto === false ? undefined : positiveMs(auto?.everyMs, 60_000, 'autoPrune.everyMs')
    this.#pruneBatch = wholeNumber(WHO, 'autoPrune.batch', auto ? auto.batch : undefined, 5_000, {
      unit: 'rows',
    })
  }

  /** How long a completed key is remembered, in ms (option `ttlMs`). */
  get ttlMs(): number {
    return this.#ttlMs
  }

  /** Starts a background sweep when the last is `everyMs` old and none is running. */
  #maybePrune(): void {
    if (this.#pruneEveryMs === undefined || this.#pruning !== undefined) return
    const now = performance.now()
    if (now - this.#prunedAt < this.#pruneEveryMs) return
    this.#prunedAt = now
    this.#pruning = this.#sweep()
      .catch(() => {
        // Dropped: the next sweep deletes what this one did not.
      })
      .finally(() => {
        this.#pruning = undefined
      })
  }

  async #sweep(): Promise<void> {
    for (let i = 0; i < MAX_BATCHES; i++) {
      if ((await this.#pruneBatchOnce(this.#pruneBatch)) < this.#pruneBatch) return
    }
  }

  /** Deletes up to `limit` expired rows, found by the expiry index; how many it deleted. */
  async #pruneBatchOnce(limit: number): Promise<number> {
    const { rowCount } = await this.#query(
      `DELETE FROM ${this.#table} WHERE key IN (
         SELECT key FROM ${this.#table} WHERE expires_at <= clock_timestamp()
         ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [limit],
    )
    return rowCount
  }

  /** The background sweep under way, if any (tests and shutdown wait on it). */
  get pruning(): Promise<void> | undefined {
    return this.#pruning
  }

  /** Whether the database answers and the table's migrations are applied: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return postgresHealth(this.#place, options)
  }

  #query<Row>(text: string, values: unknown[]) {
    return run<Row>(this.#pool, WHO, this.#table, text, values)
  }

  async claim(key: string, owner: string): Promise<ClaimResult> {
    this.#maybePrune()
    // Takes the key when it is free or its row expired; otherwise reads what the holder is
    // doing. A row released between the two statements is read as free: try again.
    for (let attempt = 0; attempt < 5; attempt++) {
      const taken = await this.#query(
        `INSERT INTO ${this.#table} AS d (key, owner, state, expires_at)
         VALUES ($1, $2, 'in_progress', ${msFromNow(3)})
         ON CONFLICT (key) DO UPDATE
         SET owner = EXCLUDED.owner, state = 'in_progress', expires_at = EXCLUDED.expires_at
         WHERE d.expires_at <= clock_timestamp()`,
        [rowKey(key), owner, this.#leaseMs],
      )
      if (taken.rowCount === 1) return 'claimed'
      const { rows } = await this.#query<{ state: ClaimResult }>(
        `SELECT state FROM ${this.#table} WHERE key = $1 AND expires_at > clock_timestamp()`,
        [rowKey(key)],
      )
      if (rows[0] !== undefined) return rows[0].state
    }
    // Five times freed and retaken between two statements: someone holds it now.
    return 'in_progress'
  }

  async complete(key: string, owner: string): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table} AS d (key, owner, state, expires_at)
       VALUES ($1, $2, 'completed', ${msFromNow(3)})
       ON CONFLICT (key) DO UPDATE
       SET owner = EXCLUDED.owner, state = 'completed', expires_at = EXCLUDED.expires_at
       WHERE d.owner = EXCLUDED.owner OR d.expires_at <= clock_timestamp()`,
      [rowKey(key), owner, this.#ttlMs],
    )
  }

  /** Renews `owner`'s claim for `leaseMs` while its handler runs; `false` when it no longer holds it. */
  async extend(key: string, owner: string): Promise<boolean> {
    const ms = this.#leaseMs
    const { rowCount } = await run(
      this.#pool,
      WHO,
      this.#table,
      `UPDATE ${this.#table} SET expires_at = ${msFromNow(3)}
       WHERE key = $1 AND owner = $2 AND state = 'in_progress'`,
      [rowKey(key), owner, Math.max(1, Math.ceil(ms))],
    )
    return rowCount === 1
  }

  async release(key: string, owner: string): Promise<void> {
    await this.#query(
      `DELETE FROM ${this.#table} WHERE key = $1 AND owner = $2 AND state = 'in_progress'`,
      [rowKey(key), owner],
    )
  }

  /**
   * Removes every expired claim and completion now; resolves to how many. The background sweep
   * (`autoPrune`) does it without being asked; this is for a store with `autoPrune: false`, or
   * a job of your own.
   */
  async prune(): Promise<number> {
    const { rowCount } = await this.#query(
      `DELETE FROM ${this.#table} WHERE expires_at <= clock_timestamp()`,
      [],
    )
    return rowCount
  }
}
