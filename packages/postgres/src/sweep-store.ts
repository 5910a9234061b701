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
import {
  decodeStoreKey,
  encodeStoreKey,
  failuresRead,
  MAX_PAUSE_MS,
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

  async reserveTurn(name: string, limits: RateLimits, now: number): Promise<RateTurn> {
    const key = rateRow(name)
    const values = [key, limits.ceiling, limits.raiseEveryMs, now]
    for (let tries = 0; ; tries++) {
      const { rows } = await this.#query<{ at: number; per_second: number }>(
        RESERVE(this.#table),
        values,
      )
      if (rows[0] !== undefined) return { at: rows[0].at, perSecond: rows[0].per_second }
      if (tries > 0) throw new Error(`${WHO}: the rate's row could not be written`)
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
    const values = [key, limits.floor, now, Math.min(MAX_PAUSE_MS, Math.max(0, retryAfterMs ?? 0))]
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
      [name, encodeStoreKey(key), at, failures],
    )
  }

  async heldRetry(name: string, key: string): Promise<RetryHold | undefined> {
    const { rows } = await run<{ due_at: number; failures: number }>(
      this.#pool,
      WHO,
      this.#retries,
      `SELECT due_at, failures FROM ${this.#retries} WHERE task = $1 AND key = $2`,
      [name, encodeStoreKey(key)],
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
      [name, now, now + leaseMs, Math.max(1, Math.floor(limit))],
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
      [name, encodeStoreKey(key)],
    )
  }

  /** A rate never used: its row, at its ceiling (another instance's start is kept). */
  async #startRate(key: string, limits: RateLimits, now: number) {
    await this.#query(
      `INSERT INTO ${this.#table} (name, rate_per_second, rate_moved_at, rate_paused_until)
       VALUES ($1, $2::float8, $3::float8, $3::float8) ON CONFLICT (name) DO NOTHING`,
      [key, limits.ceiling, now],
    )
  }
}

/** A rate's row, apart from the shards' names. */
const rateRow = (name: string) => `rate:${name}`

/**
 * A turn, as core's `reserveTurn` computes it ($1 the row, $2 the ceiling, $3 raiseEveryMs,
 * $4 now): the rate raised a tenth of the ceiling a step, the turn spaced after the last, not
 * before now nor in the pause. The row is locked first, so turns taken at once queue on it.
 */
const RESERVE = (table: string) => `
  UPDATE ${table} AS t SET
    rate_per_second = r.per_second,
    rate_moved_at = r.moved_at,
    rate_last_at = GREATEST($4::float8, t.rate_paused_until,
      COALESCE(t.rate_last_at + 1000 / r.per_second, $4::float8))
  FROM (
    SELECT name,
      CASE WHEN steps > 0 AND rate_per_second < $2::float8
        THEN LEAST($2::float8, rate_per_second + (steps * $2::float8) / 10)
        ELSE rate_per_second END AS per_second,
      CASE WHEN steps > 0 AND rate_per_second < $2::float8
        THEN rate_moved_at + steps * $3::float8
        ELSE rate_moved_at END AS moved_at
    FROM (
      SELECT name, rate_per_second, rate_moved_at,
        floor(($4::float8 - rate_moved_at) / $3::float8) AS steps
      FROM ${table} WHERE name = $1 AND rate_per_second IS NOT NULL FOR UPDATE
    ) AS locked
  ) AS r
  WHERE t.name = r.name
  RETURNING t.rate_last_at AS at, t.rate_per_second AS per_second`

/** A 429, as core's `throttleTurns` computes it ($2 the floor, $3 now, $4 the pause in ms). */
const THROTTLE = (table: string) => `
  UPDATE ${table} SET
    rate_per_second = GREATEST($2::float8, rate_per_second / 2),
    rate_moved_at = $3::float8,
    rate_paused_until = GREATEST(rate_paused_until, $3::float8 + $4::float8)
  WHERE name = $1 AND rate_per_second IS NOT NULL`
