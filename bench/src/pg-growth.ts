import { randomBytes } from 'node:crypto'
import { migrate, PostgresDedupeStore } from '@scheduling-kit/postgres'
import pg from 'pg'
import type { Target } from './harness.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** Deliveries each store takes (BENCH_PG_DELIVERIES, default 1 000 000). */
const DELIVERIES = Number(process.env.BENCH_PG_DELIVERIES ?? 1_000_000)
/** How long a completed payload id is kept: short, so a steady state is reached within the run. */
const TTL_MS = 10_000
const CONCURRENCY = 32

interface Growth {
  name: string
  seconds: number
  rows: number
  bytes: number
  /** The most rows seen at a sample (every tenth of the run). */
  peakRows: number
}

async function tableSize(pool: pg.Pool, schema: string): Promise<{ rows: number; bytes: number }> {
  const { rows } = await pool.query(
    `SELECT count(*)::bigint AS n, pg_total_relation_size('"${schema}".scheduling_kit_dedupe') AS b
       FROM "${schema}".scheduling_kit_dedupe`,
  )
  return { rows: Number(rows[0].n), bytes: Number(rows[0].b) }
}

/** `DELIVERIES` claim + complete pairs, `CONCURRENCY` at a time, each under a new payload id. */
async function deliver(
  pool: pg.Pool,
  schema: string,
  name: string,
  store: PostgresDedupeStore,
): Promise<Growth> {
  let next = 0
  let peakRows = 0
  const step = Math.max(1, Math.floor(DELIVERIES / 10))
  const started = performance.now()
  let sampling = Promise.resolve()
  // This machine's server runs with autovacuum off; a production server has it on (the
  // default), and without it no deleted or updated row's space is ever reused. A VACUUM every
  // 10 s stands in for it, for both stores alike.
  const vacuum = setInterval(() => {
    sampling = sampling.then(async () => {
      await pool.query(`VACUUM "${schema}".scheduling_kit_dedupe`)
    })
  }, 10_000)
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < DELIVERIES) {
        const n = next++
        const key = `payload_${n}`
        await store.claim(key, 'bench')
        await store.complete(key, 'bench')
        if (n % step === 0)
          sampling = sampling.then(async () => {
            peakRows = Math.max(peakRows, (await tableSize(pool, schema)).rows)
          })
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  clearInterval(vacuum)
  await sampling
  await store.pruning
  const size = await tableSize(pool, schema)
  return { name, seconds, ...size, peakRows: Math.max(peakRows, size.rows) }
}

/**
 * The PostgreSQL dedupe table over a million deliveries: with the background sweep (`autoPrune`,
 * every second here) against none (what `prune()` left to the app gave), in the same run, with
 * a VACUUM every 10 s standing in for autovacuum (off on this machine's server). The
 * completed ids are kept `TTL_MS`, so the swept table holds about (rate x (TTL + sweep period))
 * rows at any time, and the unswept one every row ever written.
 */
export async function pgGrowthBench(): Promise<Target[]> {
  // Commits without waiting for the WAL flush (this session only): the run measures what the
  // table holds, not the disk, and a million fsyncs would take most of an hour.
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: CONCURRENCY,
    options: '-c synchronous_commit=off',
  })
  const run = randomBytes(4).toString('hex')
  const results: Growth[] = []
  try {
    for (const [name, autoPrune] of [
      ['autoPrune every 1 s', { everyMs: 1_000 }],
      ['no pruning', false],
    ] as const) {
      const schema = `sk_bench_growth_${run}_${results.length}`
      await migrate(pool, { schema })
      const store = new PostgresDedupeStore({ pool, schema, ttlMs: TTL_MS, autoPrune })
      results.push(await deliver(pool, schema, name, store))
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
    }
  } finally {
    await pool.end()
  }
  console.log(
    `\nPostgreSQL dedupe table after ${DELIVERIES.toLocaleString('en')} deliveries (completed ids kept ${TTL_MS / 1000} s, ${CONCURRENCY} at a time)`,
  )
  console.log(
    '| store | deliveries/s | rows at the end | peak rows | table + indexes | bytes per delivery |',
  )
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const r of results) {
    console.log(
      `| ${r.name} | ${Math.round(DELIVERIES / r.seconds)} | ${r.rows} | ${r.peakRows} | ${(r.bytes / 1_048_576).toFixed(1)} MB | ${(r.bytes / DELIVERIES).toFixed(1)} |`,
    )
  }
  const [swept, unswept] = results as [Growth, Growth]
  return [
    {
      what: `dedupe table size after ${DELIVERIES} deliveries: swept / unswept`,
      ratio: swept.bytes / unswept.bytes,
      limit: 0.2,
      kind: 'max',
    },
    {
      what: `dedupe table rows after ${DELIVERIES} deliveries: swept / unswept`,
      ratio: swept.rows / unswept.rows,
      limit: 0.2,
      kind: 'max',
    },
    {
      what: 'dedupe delivery time: swept / unswept',
      ratio: swept.seconds / unswept.seconds,
      limit: 1.25,
      kind: 'max',
    },
  ]
}
