// PostgreSQL ledger retention at size: a table of BENCH_RETENTION_ENTRIES entries (default
// 1,000,000) received over 60 days, the last 7 with a 2 KiB body, and a mark per two entries.
// Measured: the hourly purge of steady state (an hour's worth of entries past 30 days, bodies
// past 7) through the store, against the same purge as the single statements of before; the
// first purge after a long time (half the table at once), each statement's time in batches
// against the one DELETE of before (which holds its locks throughout); dead rows left. Target:
// the steady-state purge at most 50 ms at a million entries.
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import pg from 'pg'
import { median, quantile, type Target } from './harness.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ENTRIES = Number(process.env.BENCH_RETENTION_ENTRIES ?? 1_000_000)
const HOUR = 3_600_000
const DAY = 24 * HOUR
const SPAN = 60 * DAY
const ROUNDS = 5

/** A fresh schema holding `ENTRIES` entries spread evenly over the 60 days before `now`. */
async function fill(pool: pg.Pool, schema: string, now: number): Promise<string> {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await migrate(pool, { schema, only: ['ledger'] })
  const table = `${schema}.scheduling_kit_ledger`
  const body = 'b'.repeat(2_048)
  await pool.query(
    `INSERT INTO ${table} (id, version, entry, body, body_expires_at, status, type, account, received_at)
     SELECT 'dlv_' || n, 1, $4, CASE WHEN t > $1 - 7 * ${DAY}::bigint THEN $3 END,
            CASE WHEN t > $1 - 7 * ${DAY}::bigint THEN t + 7 * ${DAY}::bigint END,
            'done', 'event.created', 'acct_' || (n % 1000), t
     FROM (SELECT n, ($1 - $2::bigint + (n::bigint * $2::bigint) / $5)::bigint AS t
           FROM generate_series(1, $5) AS n) AS s`,
    [now, SPAN, body, JSON.stringify({ payloadId: 'payload_x', attempts: 1 }), ENTRIES],
  )
  await pool.query(
    `INSERT INTO ${schema}."scheduling_kit_ledger$marks" (resource_id, version, mark, at, rank, by, horizon)
     SELECT 'acct|event_' || n, 1, '{}', t, 1, 'dlv_' || n, t
     FROM (SELECT n, ($1 - $2::bigint + (n::bigint * 2 * $2::bigint) / $3)::bigint AS t
           FROM generate_series(1, $3 / 2) AS n) AS s`,
    [now, SPAN, ENTRIES],
  )
  await pool.query(`VACUUM ANALYZE ${table}`)
  await pool.query(`VACUUM ANALYZE ${schema}."scheduling_kit_ledger$marks"`)
  return table
}

/** The purge of before: one statement each, over every row due. */
async function singleStatements(pool: pg.Pool, schema: string, before: number, bodies: number) {
  const t = `${schema}.scheduling_kit_ledger`
  await pool.query(`DELETE FROM ${schema}."scheduling_kit_ledger$marks" WHERE horizon < $1`, [
    before,
  ])
  await pool.query(`DELETE FROM ${t} WHERE received_at < $1`, [before])
  await pool.query(
    `UPDATE ${t} SET body = NULL, body_expires_at = NULL, version = version + 1 WHERE body_expires_at <= $1`,
    [bodies],
  )
}

async function deadRows(pool: pg.Pool, schema: string): Promise<number> {
  await pool.query('SELECT pg_stat_force_next_flush()').catch(() => undefined)
  const { rows } = await pool.query(
    `SELECT coalesce(sum(n_dead_tup), 0)::int AS n FROM pg_stat_user_tables WHERE schemaname = $1`,
    [schema],
  )
  return rows[0].n
}

export async function pgRetentionBench(): Promise<Target[]> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schema = 'sk_bench_retention'
  try {
    const now = Date.now()
    const filled = performance.now()
    await fill(pool, schema, now)
    console.log(`\n## PostgreSQL ledger retention at ${ENTRIES.toLocaleString('en')} entries`)
    console.log(`(filled in ${((performance.now() - filled) / 1000).toFixed(1)} s)`)
    const store = new PostgresLedgerStore({ pool, schema })
    // The first purge after 30 days of none: half the table, statement by statement.
    const statements: number[] = []
    const timed = {
      query: async (text: string, values?: unknown[]) => {
        const started = performance.now()
        const result = await pool.query(text, values)
        statements.push(performance.now() - started)
        return result
      },
    }
    const batched = new PostgresLedgerStore({ pool: timed as unknown as pg.Pool, schema })
    const bigStarted = performance.now()
    const big = await batched.purge({
      entriesBefore: now - 30 * DAY,
      bodiesBefore: now,
      marksBefore: now - 30 * DAY,
    })
    const bigMs = performance.now() - bigStarted
    const dead = await deadRows(pool, schema)
    statements.sort((a, b) => a - b)
    console.log(
      `first purge, batched: ${big.entries} entries, ${big.bodies} bodies, ${big.marks} marks in ${bigMs.toFixed(0)} ms; ${statements.length} statements, each p50 ${quantile(statements, 0.5).toFixed(1)} ms, p99 ${quantile(statements, 0.99).toFixed(1)} ms, max ${statements[statements.length - 1]!.toFixed(1)} ms; dead rows after: ${dead}`,
    )
    await pool.query(`VACUUM ${schema}.scheduling_kit_ledger`)
    // Steady state: each round moves the clock on an hour and purges what fell due.
    const steady: number[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const at = now + round * HOUR
      const started = performance.now()
      await store.purge({
        entriesBefore: at - 30 * DAY,
        bodiesBefore: at,
        marksBefore: at - 30 * DAY,
      })
      steady.push(performance.now() - started)
    }
    // The same on the old statements, from a table filled the same way.
    await fill(pool, schema, now)
    const oldStarted = performance.now()
    await singleStatements(pool, schema, now - 30 * DAY, now)
    const oldBigMs = performance.now() - oldStarted
    await pool.query(`VACUUM ${schema}.scheduling_kit_ledger`)
    const oldSteady: number[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const at = now + round * HOUR
      const started = performance.now()
      await singleStatements(pool, schema, at - 30 * DAY, at)
      oldSteady.push(performance.now() - started)
    }
    console.log(
      `first purge, one statement each (before): ${oldBigMs.toFixed(0)} ms, the entries' DELETE holding its row locks throughout`,
    )
    console.log(
      `hourly purge (an hour's entries, bodies and marks): batched p50 ${median(steady).toFixed(1)} ms (rounds ${steady.map((t) => t.toFixed(1)).join(', ')}); one statement each ${median(oldSteady).toFixed(1)} ms`,
    )
    return [
      {
        what: `hourly ledger purge at ${ENTRIES.toLocaleString('en')} entries (PostgreSQL)`,
        ratio: median(steady),
        limit: 50,
        kind: 'max',
        unit: ' ms',
      },
    ]
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await pool.end()
  }
}
