import { randomBytes } from 'node:crypto'
import { createDeliveryLedger, type LedgerStore } from '@scheduling-kit/core'
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import { RedisLedgerStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import pg from 'pg'
import type { Target } from './harness.js'

// What the ledger keeps per delivery on Redis and PostgreSQL: with its 2 KiB body, once the
// body is purged (the entry and its Event's mark), and once retention is over (nothing).
// Deliveries go through a real ledger: two per Event (created, then canceled), 1 000 accounts.

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
/** Deliveries per store (BENCH_LEDGER_DELIVERIES, default 100 000). */
const DELIVERIES = Number(process.env.BENCH_LEDGER_DELIVERIES ?? 100_000)
const CONCURRENCY = 32
const DAY = 86_400_000

interface Sizes {
  entries: number
  marks: number
  bytes: number
}

/** A 2 KiB Event as the service sends it. */
function eventOf(n: number, state: string, start: number) {
  const event = {
    id: `event_${String(n).padStart(8, '0')}`,
    state,
    start_at: new Date(start).toISOString(),
    end_at: new Date(start + 1_800_000).toISOString(),
    event_type_id: 'evtype_intro_call',
    location: { kind: 'video', join_url: `https://meet.example.com/${n}` },
    attendees: [{ id: `attendee_${n}`, email: `person${n}@example.com`, name: 'A Person' }],
    description: '',
  }
  event.description = 'd'.repeat(Math.max(0, 2_048 - JSON.stringify(event).length))
  return event
}

async function fill(store: LedgerStore, started: number): Promise<(ms: number) => number> {
  let clock = started
  const ledger = createDeliveryLedger({ store, now: () => clock })
  let next = 0
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < DELIVERIES) {
        const n = next++
        const event = Math.floor(n / 2)
        const type = n % 2 === 0 ? 'event.created' : 'event.canceled'
        const account = `acct_${String(event % 1_000).padStart(4, '0')}`
        const envelope = {
          id: `payload_${randomBytes(8).toString('hex')}`,
          type,
          occurred_at: new Date(started + n).toISOString(),
          payload: eventOf(event, n % 2 === 0 ? 'confirmed' : 'canceled', started + DAY),
        }
        const text = JSON.stringify(envelope)
        const delivery = {
          envelope,
          key: `account:${account.length}:${account}:${envelope.id}`,
          account,
          text,
        }
        // `busy`: its Event's other delivery holds it (answered 409); the service tries again.
        while ((await ledger.deliver(delivery, () => {})) === 'busy') {}
      }
    }),
  )
  return (ms: number) => {
    clock = started + ms
    return clock
  }
}

async function redisSizes(redis: Redis, base: string): Promise<Sizes> {
  let bytes = 0
  let entries = 0
  let marks = 0
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${base}*`, 'COUNT', 1000)
    cursor = next
    for (const key of keys) {
      bytes += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0)
      if (key.startsWith(`${base}e:`)) entries++
      else if (key.startsWith(`${base}m:`)) marks++
    }
  } while (cursor !== '0')
  return { entries, marks, bytes }
}

async function pgSizes(pool: pg.Pool, schema: string): Promise<Sizes> {
  const ledger = `"${schema}".scheduling_kit_ledger`
  const marks = `"${schema}"."scheduling_kit_ledger$marks"`
  await pool.query(`VACUUM FULL ${ledger}`)
  await pool.query(`VACUUM FULL ${marks}`)
  const { rows } = await pool.query(
    `SELECT (SELECT count(*) FROM ${ledger})::bigint AS e, (SELECT count(*) FROM ${marks})::bigint AS m,
       (pg_total_relation_size('${ledger}') + pg_total_relation_size('${marks}'))::bigint AS b`,
  )
  return { entries: Number(rows[0].e), marks: Number(rows[0].m), bytes: Number(rows[0].b) }
}

async function measureStore(
  name: string,
  store: LedgerStore,
  sizes: () => Promise<Sizes>,
): Promise<Target[]> {
  const started = Date.now()
  const t0 = performance.now()
  const at = await fill(store, started)
  const seconds = (performance.now() - t0) / 1000
  const full = await sizes()
  const ledger = (ms: number) => createDeliveryLedger({ store, now: () => at(ms) })
  const bodies = await ledger(8 * DAY).purge()
  const bare = await sizes()
  const purged = await ledger(40 * DAY).purge()
  const empty = await sizes()
  const perFull = full.bytes / full.entries
  const perBare = bare.bytes / bare.entries
  console.log(
    `\n${name}: ${DELIVERIES} deliveries in ${seconds.toFixed(1)} s; ${full.entries} entries, ${full.marks} marks`,
  )
  console.log(
    `  with bodies: ${full.bytes} B (${perFull.toFixed(0)} B per entry, its Event's mark shared by two)`,
  )
  console.log(
    `  bodies purged (${bodies.bodies}): ${bare.bytes} B (${perBare.toFixed(0)} B per entry with its share of the marks)`,
  )
  console.log(
    `  past retention (${purged.entries} entries, ${purged.marks} marks): ${empty.entries} entries, ${empty.marks} marks, ${empty.bytes} B left`,
  )
  return [
    {
      what: `${name}: bytes per entry without its body (marks included), at ${DELIVERIES}`,
      ratio: perBare,
      limit: 300,
      kind: 'max',
      unit: ' B',
    },
    {
      what: `${name}: marks left after purge past retention, of ${full.marks}`,
      ratio: empty.marks,
      limit: 0,
      kind: 'max',
      unit: '',
    },
    {
      what: `${name}: entries left after purge past retention, of ${full.entries}`,
      ratio: empty.entries,
      limit: 0,
      kind: 'max',
      unit: '',
    },
  ]
}

export async function ledgerBytesBench(): Promise<Target[]> {
  const out: Target[] = []
  const redis = new Redis(REDIS_URL)
  const prefix = `bench-bytes-${randomBytes(4).toString('hex')}:`
  try {
    const store = new RedisLedgerStore({ client: redis, prefix, logger: false })
    out.push(
      ...(await measureStore('Redis', store, () =>
        redisSizes(redis, `${prefix}ledger:{${prefix}}:`),
      )),
    )
  } finally {
    redis.disconnect()
  }
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: CONCURRENCY })
  const schema = `bench_bytes_${randomBytes(4).toString('hex')}`
  try {
    await migrate(pool, { schema, only: ['ledger'] })
    const store = new PostgresLedgerStore({ pool, schema })
    out.push(...(await measureStore('PostgreSQL', store, () => pgSizes(pool, schema))))
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
  }
  return out
}
