import { randomBytes } from 'node:crypto'
import {
  createDeliveryLedger,
  createSchedulingClient,
  createWebhookHandler,
  type DedupeStore,
  type LedgerStore,
  MemoryDedupeStore,
  MemoryLedgerStore,
} from '@scheduling-kit/core'
import { migrate, PostgresDedupeStore, PostgresLedgerStore } from '@scheduling-kit/postgres'
import { RedisDedupeStore, RedisLedgerStore } from '@scheduling-kit/redis'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { Redis } from 'ioredis'
import pg from 'pg'
import { type Case, measure, ratio, type Target, table } from './harness.js'
import { SECRET, signedRequest } from './signed.js'

/** An hour ago: deliveries dated inside every horizon the handler refuses old bodies past. */
const RECENT = Date.now() - 3_600_000

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * A bulk replay's memory: 100 000 failed entries in a MemoryLedgerStore, replayed once 1 000
 * of them and once all the others, the live heap (after a collection) sampled every 1 000 entries. A
 * replay holds one page and its counts, so what it adds is the same whatever the number.
 * Returns the ratio of the two peaks' growth over the heap before each.
 */
async function bulkReplayMemory(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error('run the bench with --expose-gc')
  // 100,000 bodies and their entries pass the default 64 MiB: room for them.
  const store = new MemoryLedgerStore({ maxEntries: 200_000, maxBytes: 256 * 1024 * 1024 })
  const now = Date.now()
  for (let i = 0; i < 100_000; i++) {
    const id = `payload_bulk_${i}`
    const body = JSON.stringify({
      type: 'event.created',
      id,
      version: '2020-11-18',
      occurred_at: new Date().toISOString(),
      payload: { uri: `https://service.test/events/${i}`, name: 'x'.repeat(200) },
    })
    await store.write(
      {
        id,
        payloadId: id,
        type: 'event.created',
        source: 'webhook',
        status: 'failed',
        attempts: 1,
        receivedAt: now - i,
        updatedAt: now - i,
        body,
        bodyExpiresAt: now + 86_400_000,
      },
      undefined,
    )
  }
  const handler = createWebhookHandler({
    secret: SECRET,
    ledger: createDeliveryLedger({ store, maxAttempts: 1_000 }),
    onAny: () => {},
  })
  const run = async (max: number) => {
    gc()
    const base = process.memoryUsage().heapUsed
    let peak = base
    const started = performance.now()
    const report = await handler.replay(
      { status: ['failed'] },
      {
        max,
        perSecond: 1e9,
        onProgress: (r) => {
          if ((r.replayed + r.failed + r.skipped) % 1_000 !== 0) return
          gc()
          peak = Math.max(peak, process.memoryUsage().heapUsed)
        },
      },
    )
    if (report.replayed !== max)
      throw new Error(
        `bulk replay ran ${report.replayed} of ${max}: ${JSON.stringify(report).slice(0, 600)}`,
      )
    return { grew: peak - base, ms: performance.now() - started }
  }
  const small = await run(1_000)
  // The 99 000 still failed (a done entry is not replayed again without `again`).
  const large = await run(99_000)
  console.log(
    '\n| bulk replay, MemoryLedgerStore of 100 000 entries | live heap added (peak) | time |',
  )
  console.log('|---|---:|---:|')
  console.log(
    `| 1 000 entries | ${(small.grew / 1024).toFixed(0)} KiB | ${small.ms.toFixed(0)} ms |`,
  )
  console.log(
    `| the other 99 000 entries | ${(large.grew / 1024).toFixed(0)} KiB | ${large.ms.toFixed(0)} ms |`,
  )
  return Math.max(large.grew, 64 * 1024) / Math.max(small.grew, 64 * 1024)
}

/** A signed 2 KiB delivery of its own payload id; with `resource`, it names an Event. */
function delivery(n: number, run: string, resource: boolean) {
  const body = Buffer.from(
    JSON.stringify({
      id: `payload_${run}_${n}`,
      type: 'event.created',
      occurred_at: new Date(RECENT + n).toISOString(),
      payload: resource
        ? { id: `event_${run}_${n}`, state: 'confirmed', note: 'x'.repeat(1900) }
        : { note: 'x'.repeat(1900) },
    }),
  )
  return signedRequest(body)
}

/** Counts the commands a Redis client sends: each awaited one is a round trip here. */
function countingRedis(client: Redis): { client: Redis; count: () => number } {
  let sent = 0
  const original = client.sendCommand.bind(client)
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++
    return original(...args)
  }) as Redis['sendCommand']
  return { client, count: () => sent }
}

/** Counts a pool's queries: each is a round trip. */
function countingPool(pool: pg.Pool): { count: () => number } {
  let sent = 0
  const original = pool.query.bind(pool)
  pool.query = ((...args: unknown[]) => {
    sent++
    return (original as (...a: unknown[]) => unknown)(...args)
  }) as typeof pool.query
  return { count: () => sent }
}

/**
 * The ledger's cost per delivery against today's dedupe claim, in process and on each shared
 * store (time, and round trips counted), the ordering guard's cost, and `catchUp` over 1 000
 * accounts against the fake service (requests, time).
 */
export async function ledgerBench(): Promise<Target[]> {
  const run = randomBytes(4).toString('hex')
  let n = 0
  const handle = (options: { dedupe?: DedupeStore; ledger?: LedgerStore }, resource: boolean) => {
    const handler = createWebhookHandler({
      secret: SECRET,
      ...(options.dedupe ? { dedupe: options.dedupe } : {}),
      ...(options.ledger ? { ledger: createDeliveryLedger({ store: options.ledger }) } : {}),
      onAny: () => {},
    })
    return async () => {
      const res = await handler.handle(delivery(n++, run, resource))
      // Run, not only answered: a refusal answered 200 (too_old, a duplicate) is no delivery.
      if (res?.status !== 200 || !String(res.body).includes('"received":true'))
        throw new Error(`answered ${res?.status}: ${res?.body}`)
      if (String(res.body).includes('"duplicate"')) throw new Error(`a duplicate: ${res.body}`)
    }
  }
  // A memory store keeps every claim and body for its retention: each batch starts on fresh
  // ones, so the rounds never fill their bounds (untimed, like every case's `before`).
  const fresh = (
    name: string,
    make: () => { dedupe?: DedupeStore; ledger?: LedgerStore },
    resource: boolean,
  ): Case => {
    let current = handle(make(), resource)
    return {
      name,
      async: true,
      before: () => {
        current = handle(make(), resource)
      },
      run: () => current(),
    }
  }
  const memory: Case[] = [
    fresh('handle(), in-memory dedupe', () => ({ dedupe: new MemoryDedupeStore() }), false),
    fresh(
      'handle(), MemoryLedgerStore, no Event id (no ordering guard)',
      () => ({ ledger: new MemoryLedgerStore() }),
      false,
    ),
    fresh(
      'handle(), MemoryLedgerStore, an Event id (ordering guard)',
      () => ({ ledger: new MemoryLedgerStore() }),
      true,
    ),
  ]
  const inProcess = await measure(memory)
  table('The ledger in process: one 2 KiB delivery', inProcess, memory[0]!.name)

  const redis = countingRedis(new Redis(REDIS_URL))
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schema = `sk_bench_ledger_${run}`
  await migrate(pool, { schema })
  const queries = countingPool(pool)
  const prefix = `sk-bench-ledger:${run}:`
  const shared: Case[] = [
    {
      name: 'handle(), RedisDedupeStore',
      async: true,
      run: handle(
        { dedupe: new RedisDedupeStore({ client: redis.client, prefix, logger: false }) },
        true,
      ),
    },
    {
      name: 'handle(), RedisLedgerStore (ordering guard)',
      async: true,
      run: handle(
        { ledger: new RedisLedgerStore({ client: redis.client, prefix, logger: false }) },
        true,
      ),
    },
    {
      name: 'handle(), PostgresDedupeStore',
      async: true,
      run: handle({ dedupe: new PostgresDedupeStore({ pool, schema, autoPrune: false }) }, true),
    },
    {
      name: 'handle(), PostgresLedgerStore (ordering guard)',
      async: true,
      run: handle({ ledger: new PostgresLedgerStore({ pool, schema }) }, true),
    },
  ]
  // Round trips per delivery, counted on one delivery of each (after a warm-up).
  const trips: [string, number][] = []
  for (const c of shared) {
    await c.run()
    const before = redis.count() + queries.count()
    await c.run()
    trips.push([c.name, redis.count() + queries.count() - before])
  }
  for (const [what, resource] of [
    ['RedisLedgerStore, no Event id', false],
    ['PostgresLedgerStore, no Event id', false],
  ] as const) {
    const store = what.startsWith('Redis')
      ? new RedisLedgerStore({ client: redis.client, prefix, logger: false })
      : new PostgresLedgerStore({ pool, schema })
    const one = handle({ ledger: store }, resource)
    await one()
    const before = redis.count() + queries.count()
    await one()
    trips.push([`handle(), ${what}`, redis.count() + queries.count() - before])
  }
  let sharedResults: Awaited<ReturnType<typeof measure>>
  try {
    sharedResults = await measure(shared, { rounds: 11, batchMs: 20 })
  } finally {
    const keys = await redis.client.keys(`${prefix}*`)
    if (keys.length > 0) await redis.client.del(...keys)
    redis.client.disconnect()
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
    await pool.end()
  }
  table('The ledger on the shared stores (loopback)', sharedResults, shared[0]!.name)
  console.log('\n| one delivery | round trips |')
  console.log('|---|---:|')
  for (const [what, count] of trips) console.log(`| ${what} | ${count} |`)

  // catchUp over 1 000 accounts, three Events each, against the fake service on loopback.
  const service = await startFakeSchedulingService()
  const accounts = Array.from({ length: 1_000 }, (_, i) => `acct_bench_${i}`)
  const tokens = new Map(accounts.map((a) => [a, service.auth.grant(a).access_token]))
  for (const account of accounts)
    for (let e = 0; e < 3; e++)
      await service.trigger('event.created', { account, payload: { id: `event_${account}_${e}` } })
  const handler = createWebhookHandler({
    ledger: createDeliveryLedger({ store: new MemoryLedgerStore() }),
    subscriptions: {
      lookup: () => undefined,
      client: (key: string) =>
        createSchedulingClient({ baseUrl: service.apiUrl, token: tokens.get(key)! }),
    } as never,
    onAny: () => {},
  })
  const requestsBefore = service.eventLists.requests
  const started = performance.now()
  const report = await handler.catchUp({ keys: accounts, concurrency: 8 })
  const ms = performance.now() - started
  const requests = service.eventLists.requests - requestsBefore
  const again = performance.now()
  const second = await handler.catchUp({ keys: accounts, concurrency: 8 })
  const msAgain = performance.now() - again
  await service.close()
  console.log('\n| catchUp, 1 000 accounts x 3 Events | value |')
  console.log('|---|---:|')
  console.log(`| event list requests | ${requests} |`)
  console.log(`| deliveries fed and run (first) | ${report.ran} |`)
  console.log(`| time, first (all fed) | ${ms.toFixed(0)} ms |`)
  console.log(`| time, second (nothing to feed: ${second.fed} fed) | ${msAgain.toFixed(0)} ms |`)
  if (report.ran !== 3_000 || second.fed !== 0) throw new Error('catchUp did not feed as planned')

  const bulk = await bulkReplayMemory()

  return [
    {
      what: 'bulk replay: live heap added running 100 000 entries / running 1 000',
      ratio: bulk,
      limit: 2,
      kind: 'max',
    },
    {
      what: 'ledger (MemoryLedgerStore, no Event id) / in-memory dedupe, per delivery',
      ratio: ratio(inProcess, memory[1]!.name, memory[0]!.name),
      limit: 1.2,
      kind: 'max',
    },
    {
      what: 'catchUp: event list requests per account (3 Events, one page each)',
      ratio: requests / accounts.length,
      limit: 1,
      kind: 'max',
    },
  ]
}
