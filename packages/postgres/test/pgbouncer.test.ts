import { type LocalBouncer, startPgbouncer } from '@scheduling-kit/conformance'
import {
  runDedupeStoreConformance,
  runRefreshRace,
  runSubscriptionStoreConformance,
  runTokenStoreConformance,
} from '@scheduling-kit/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  migrate,
  PostgresDedupeStore,
  PostgresSubscriptionStore,
  PostgresTokenStore,
} from '../src/index.js'
import { DATABASE_URL, uniqueSchema } from './helpers.js'

// The stores behind pgbouncer in transaction mode (each statement may run on another server
// connection: no session state survives), started by this file in front of the tests' server.
let bouncer: LocalBouncer
let pool: pg.Pool
let schema: string
beforeAll(async () => {
  bouncer = await startPgbouncer(DATABASE_URL)
  pool = new pg.Pool({ connectionString: bouncer.url, max: 10 })
  pool.on('error', () => {})
  schema = uniqueSchema('bouncer')
  await migrate(pool, { schema })
}, 180_000)
afterAll(async () => {
  await pool?.end()
  await bouncer?.stop()
})

runTokenStoreConformance(() => new PostgresTokenStore({ pool, schema }), {
  describe,
  it,
  name: 'PostgresTokenStore behind pgbouncer (transaction mode): TokenStore conformance',
})

runSubscriptionStoreConformance(() => new PostgresSubscriptionStore({ pool, schema }), {
  describe,
  it,
  name: 'PostgresSubscriptionStore behind pgbouncer (transaction mode): SubscriptionStore conformance',
})

runDedupeStoreConformance((timing) => new PostgresDedupeStore({ pool, schema, ...timing }), {
  describe,
  it,
  name: 'PostgresDedupeStore behind pgbouncer (transaction mode): DedupeStore conformance',
})

it('migrate() from 6 pools at once through pgbouncer: each version applied once', async () => {
  const fresh = uniqueSchema('bouncer_migrate')
  const pools = Array.from(
    { length: 6 },
    () => new pg.Pool({ connectionString: bouncer.url, max: 2 }),
  )
  try {
    const results = await Promise.all(pools.map((p) => migrate(p, { schema: fresh })))
    expect(results.flatMap((r) => r.applied).sort()).toEqual([
      'scheduling_kit_dedupe@1',
      'scheduling_kit_dedupe@2',
      'scheduling_kit_ledger@1',
      'scheduling_kit_ledger@2',
      'scheduling_kit_ledger@3',
      'scheduling_kit_ledger@4',
      'scheduling_kit_subscriptions@1',
      'scheduling_kit_subscriptions@2',
      'scheduling_kit_subscriptions@3',
      'scheduling_kit_subscriptions@4',
      'scheduling_kit_subscriptions@5',
      'scheduling_kit_subscriptions@6',
      'scheduling_kit_tokens@1',
    ])
  } finally {
    await Promise.all(pools.map((p) => p.end()))
  }
})

it('the refresh race through pgbouncer: 8 processes x 25 callers, 5 expiries, one refresh each', async () => {
  process.env.RACE_SCHEMA = schema
  const before = process.env.DATABASE_URL
  process.env.DATABASE_URL = bouncer.url
  try {
    const report = await runRefreshRace({
      storeModule: new URL('./fixtures/race-store.mjs', import.meta.url),
    })
    expect(report.problems).toEqual([])
    expect(report.rounds.map((r) => r.refreshRequests)).toEqual([1, 1, 1, 1, 1])
  } finally {
    if (before === undefined) delete process.env.DATABASE_URL
    else process.env.DATABASE_URL = before
  }
}, 180_000)
