import type {
  HeldRetry,
  RateCapStore,
  RateLimits,
  RateTurn,
  RetryHold,
  RetryStore,
  SweepCheckpoint,
  SweepStore,
} from '@scheduling-kit/core'
import { SchedulingError } from '@scheduling-kit/core/errors'
import {
  decodeStoreKey,
  encodeStoreKey,
  failuresRead,
  MAX_PAUSE_MS,
  pauseOf,
} from '@scheduling-kit/core/store'
import {
  DEFAULT_SUBSCRIPTION_TABLE,
  msFromNow,
  type PostgresPool,
  retriesTableName,
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
 * its checkpoint, moved by compare-and-set on a version. It keeps the app's request rate too
 * (`RateCapStore`, for `new RateCap({ store })`, `subscriptions@5`): a row per rate, each turn
 * one statement under the row's lock; and the held tries of work that failed for one account
 * (`RetryStore`, `subscriptions@6`): a row per task and key in `<subscriptions table>$retries`,
 * taken with `FOR UPDATE SKIP LOCKED`. Run `migrate(pool)` first.
 *
 * @example
 * ```ts
 * const subscriptions = createWebhookSubscriptions({
 *   ...options,
 *   sweep: { store: new PostgresSweepStore({ pool }), ledger },
 * })
 * ```
 */
export class PostgresSweepStore implements SweepStore, RateCapStore, RetryStore {
  readonly #pool: PostgresPool
  readonly #table: string
  readonly #retries: string
  readonly #place: string

  constructor(options: PostgresSweepStoreOptions) {
    this.#place = tableOf(WHO, options, DEFAULT_SUBSCRIPTION_TABLE)
    this.#pool = options.pool
    const schema = this.#place.slice(0, this.#place.lastIndexOf('.'))
    this.#table = `${schema}.${sweepsTableName(options.table ?? DEFAULT_SUBSCRIPTION_TABLE)}`
    this.#retries = `${schema}.${retriesTableName(options.table ?? DEFAULT_SUBSCRIPTION_TABLE)}`
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
      [encodeStoreKey(name), owner, Math.max(1, Math.ceil(ttlMs))],
    )
    return rowCount === 1
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.#query(
      `UPDATE ${this.#table} SET lease_owner = NULL, lease_expires_at = NULL
       WHERE name = $1 AND lease_owner = $2`,
      [encodeStoreKey(name), owner],
    )
  }

  async checkpoint(name: string): Promise<SweepCheckpoint | undefined> {
    const { rows } = await this.#query<{ through: string; version: number }>(
      // Version 0 is a shard with no checkpoint yet (a row its lease made): none, as writes read it.
      `SELECT through, version FROM ${this.#table}
       WHERE name = $1 AND through IS NOT NULL AND version >= 1`,
      [encodeStoreKey(name)],
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
            [encodeStoreKey(name), through],
          )
        : await this.#query<{ version: number }>(
            `UPDATE ${this.#table} SET through = $2, version = version + 1
             WHERE name = $1 AND version = $3
             RETURNING version`,
            [encodeStoreKey(name), through, expected],
          )
    return rows[0]?.version
  }

  async reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn> {
    const key = rateRow(name)
    const values = [key, limits.ceiling, limits.raiseEveryMs, now, limits.floor, MAX_PAUSE_MS]
    for (let tries = 0; ; tries++) {
      const { rows } = await this.#query<{ at: number; per_second: number }>(
        RESERVE(this.#table),
        values,
      )
      if (rows[0] !== undefined) return { at: rows[0].at, perSecond: rows[0].per_second }
      if (tries > 0)
        throw new SchedulingError(
          'store_write_failed',
          `${WHO}: the rate's row "${name}" could not be written (removed again as it was made?); the next turn tries again.`,
          { status: 500 },
        )
      await this.#startRate(key, limits, now)
    }
  }

  async throttleRate(
    name: string,
    limits: RateLimits,
    now: number,
    retryAfterMs: number | undefined,
  ): Promise<void> {
    const key = rateRow(name)
    const values = [key, limits.floor, now, pauseOf(retryAfterMs), limits.ceiling, MAX_PAUSE_MS]
    const { rowCount } = await this.#query(THROTTLE(this.#table), values)
    if (rowCount === 1) return
    await this.#startRate(key, limits, now)
    await this.#query(THROTTLE(this.#table), values)
  }

  async holdRetry(name: string, key: string, at: number, failures: number): Promise<void> {
    await run(
      this.#pool,
      WHO,
      this.#retries,
      `INSERT INTO ${this.#retries} (task, key, due_at, failures) VALUES ($1, $2, $3, $4)
       ON CONFLICT (task, key) DO UPDATE SET due_at = EXCLUDED.due_at, failures = EXCLUDED.failures`,
      [encodeStoreKey(name), encodeStoreKey(key), at, failures],
    )
  }

  async heldRetry(name: string, key: string): Promise<RetryHold | undefined> {
    const { rows } = await run<{ due_at: number; failures: number }>(
      this.#pool,
      WHO,
      this.#retries,
      `SELECT due_at, failures FROM ${this.#retries} WHERE task = $1 AND key = $2`,
      [encodeStoreKey(name), encodeStoreKey(key)],
    )
    const row = rows[0]
    return row === undefined ? undefined : { at: row.due_at, failures: failuresRead(row.failures) }
  }

  async takeRetries(
    name: string,
    now: number,
    limit: number,
    leaseMs: number,
  ): Promise<HeldRetry[]> {
    const { rows } = await run<{ key: string; failures: number }>(
      this.#pool,
      WHO,
      this.#retries,
      `UPDATE ${this.#retries} AS t SET due_at = $3
       FROM (SELECT key FROM ${this.#retries} WHERE task = $1 AND due_at <= $2
             ORDER BY due_at LIMIT $4 FOR UPDATE SKIP LOCKED) AS due
       WHERE t.task = $1 AND t.key = due.key
       RETURNING t.key, t.failures`,
      [encodeStoreKey(name), now, now + leaseMs, Math.max(1, Math.floor(limit))],
    )
    return rows.map((row) => ({
      key: decodeStoreKey(row.key),
      failures: failuresRead(row.failures),
    }))
  }

  async dropRetry(name: string, key: string): Promise<void> {
    await run(
      this.#pool,
      WHO,
      this.#retries,
      `DELETE FROM ${this.#retries} WHERE task = $1 AND key = $2`,
      [encodeStoreKey(name), encodeStoreKey(key)],
    )
  }

  /**
   * A rate never used: its row, at its ceiling (another instance's start is kept). A row whose
   * rate was wiped (NULL: a hostile or broken write) starts again the same way, so it cannot
   * stop the cap.
   */
  async #startRate(key: string, limits: RateLimits, now: number) {
    await this.#query(
      `INSERT INTO ${this.#table} AS t (name, rate_per_second, rate_moved_at, rate_paused_until)
       VALUES ($1, $2::float8, $3::float8, $3::float8)
       ON CONFLICT (name) DO UPDATE SET rate_per_second = EXCLUDED.rate_per_second,
         rate_moved_at = EXCLUDED.rate_moved_at, rate_paused_until = EXCLUDED.rate_paused_until,
         rate_last_at = NULL
       WHERE t.rate_per_second IS NULL`,
      [key, limits.ceiling, now],
    )
  }
}

/** A rate's row, apart from the shards' names (each name written losslessly: `encodeStoreKey`). */
const rateRow = (name: string) => `rate:${encodeStoreKey(name)}`

/**
 * A turn, as core's `reserveTurn` computes it ($1 the row, $2 the ceiling, $3 raiseEveryMs,
 * $4 now, $5 the floor, $6 the longest pause): the rate raised a tenth of the ceiling a step,
 * the turn spaced after the last, not before now nor in the pause. The row is locked first, so
 * turns taken at once queue on it. Each number is checked first as `saneTurns` checks it
 * (`checked`): a rate off its limits (NaN and infinities too) starts again at the ceiling, a
 * move in the future, a pause past the longest, a last turn past the longest pause and a
 * spacing count as absent.
 */
const RESERVE = (table: string) => `
  UPDATE ${table} AS t SET
    rate_per_second = r.per_second,
    rate_moved_at = r.moved_at,
    rate_paused_until = r.paused_until,
    rate_last_at = GREATEST($4::float8, r.paused_until,
      COALESCE(r.last_at + 1000 / r.per_second, $4::float8))
  FROM (
    SELECT name, paused_until, last_at,
      CASE WHEN steps > 0 AND ps < $2::float8
        THEN LEAST($2::float8, ps + (steps * $2::float8) / 10)
        ELSE ps END AS per_second,
      CASE WHEN steps > 0 AND ps < $2::float8
        THEN mv + steps * $3::float8
        ELSE mv END AS moved_at
    FROM (
      SELECT name, ps, mv, paused_until, last_at, floor(($4::float8 - mv) / $3::float8) AS steps
      FROM (
        SELECT name, ok,
          CASE WHEN ok THEN rate_per_second ELSE $2::float8 END AS ps,
          CASE WHEN ok AND rate_moved_at > '-Infinity' AND rate_moved_at <= $4::float8
            THEN rate_moved_at ELSE $4::float8 END AS mv,
          CASE WHEN ok AND rate_paused_until > '-Infinity'
              AND rate_paused_until <= $4::float8 + $6::float8
            THEN rate_paused_until ELSE $4::float8 END AS paused_until,
          CASE WHEN ok AND rate_last_at > '-Infinity'
              AND rate_last_at <= $4::float8 + $6::float8 + 1000 / $5::float8
            THEN rate_last_at END AS last_at
        FROM (
          SELECT name, rate_per_second, rate_moved_at, rate_paused_until, rate_last_at,
            rate_per_second BETWEEN $5::float8 AND $2::float8 AS ok
          FROM ${table} WHERE name = $1 AND rate_per_second IS NOT NULL FOR UPDATE
        ) AS locked
      ) AS checked
    ) AS stepped
  ) AS r
  WHERE t.name = r.name
  RETURNING t.rate_last_at AS at, t.rate_per_second AS per_second`

/**
 * A 429, as core's `throttleTurns` computes it ($2 the floor, $3 now, $4 the pause in ms, $5 the
 * ceiling, $6 the longest pause), the rate and the pause read checked as RESERVE checks them.
 */
const THROTTLE = (table: string) => `
  UPDATE ${table} SET
    rate_per_second = GREATEST($2::float8, (CASE WHEN rate_per_second BETWEEN $2::float8 AND $5::float8
      THEN rate_per_second ELSE $5::float8 END) / 2),
    rate_moved_at = $3::float8,
    rate_paused_until = GREATEST($3::float8 + $4::float8, CASE WHEN rate_paused_until > '-Infinity'
      AND rate_paused_until <= $3::float8 + $6::float8 THEN rate_paused_until ELSE $3::float8 END)
  WHERE name = $1 AND rate_per_second IS NOT NULL`
