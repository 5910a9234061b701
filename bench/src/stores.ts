import { randomBytes } from 'node:crypto'
import { createBullMQQueue } from '@scheduling-kit/bullmq'
import { createWebhookHandler, type DedupeStore, MemoryDedupeStore } from '@scheduling-kit/core'
import { migrate, PostgresDedupeStore, PostgresTokenStore } from '@scheduling-kit/postgres'
import { RedisDedupeStore, RedisTokenStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import pg from 'pg'
import { type Case, measure, type Target, table } from './harness.js'
import { SECRET, signedRequest } from './signed.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const RECORD = {
  accessToken: 'at_bench',
  refreshToken: 'rt_bench',
  tokenType: 'bearer',
  expiresAt: Date.now() + 7_200_000,
  account: { id: 'acct_bench' },
}

/** A signed 2 KiB delivery with a payload id of its own, as the service sends. */
function delivery(n: number, run: string) {
  const body = Buffer.from(
    JSON.stringify({
      id: `payload_${run}_${n}`,
      type: 'event.created',
      created_at: new Date().toISOString(),
      payload: { note: 'x'.repeat(1900) },
    }),
  )
  return signedRequest(body)
}

/**
 * The shared stores on loopback: ops/s of each store operation, and what each adds to a
 * delivery handled by `handle()` against the in-memory default, in the same run.
 */
export async function storesBench(): Promise<Target[]> {
  const run = randomBytes(4).toString('hex')
  const redis = new Redis(REDIS_URL)
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schema = `sk_bench_${run}`
  await migrate(pool, { schema })
  const prefix = `sk-bench:${run}:`
  const timing = { ttlMs: 120_000 }
  const queue = createBullMQQueue({ connection: { url: REDIS_URL }, queueName: `sk-bench-${run}` })
  await queue.ready()

  let n = 0
  const handlerWith = (dedupe: DedupeStore, withQueue = false) => {
    const handler = createWebhookHandler({
      secret: SECRET,
      dedupe,
      onAny: () => {},
      ...(withQueue ? { queue } : {}),
    })
    return async () => {
      const res = await handler.handle(delivery(n++, run))
      if (res?.status !== 200) throw new Error(`answered ${res?.status}: ${res?.body}`)
    }
  }
  const redisTokens = new RedisTokenStore({ client: redis, prefix, logger: false })
  const pgTokens = new PostgresTokenStore({ pool, schema })
  await redisTokens.set('cas', RECORD)
  await pgTokens.set('cas', RECORD)
  let redisVersion = (await redisTokens.get('cas'))!.version!
  let pgVersion = (await pgTokens.get('cas'))!.version!
  const redisDedupe = new RedisDedupeStore({ client: redis, prefix, logger: false, ...timing })
  const pgDedupe = new PostgresDedupeStore({ pool, schema, ...timing })
  let k = 0

  const cases: Case[] = [
    { name: 'handle(), in-memory dedupe', async: true, run: handlerWith(new MemoryDedupeStore()) },
    { name: 'handle(), RedisDedupeStore', async: true, run: handlerWith(redisDedupe) },
    { name: 'handle(), PostgresDedupeStore', async: true, run: handlerWith(pgDedupe) },
    {
      name: 'handle(), in-memory dedupe + BullMQ enqueue',
      async: true,
      run: handlerWith(new MemoryDedupeStore(), true),
    },
    {
      name: 'Redis compareAndSet',
      async: true,
      run: async () => {
        if (!(await redisTokens.compareAndSet('cas', RECORD, redisVersion))) throw new Error('lost')
        redisVersion++
      },
    },
    {
      name: 'Redis lease acquire + release',
      async: true,
      run: async () => {
        if (!(await redisTokens.acquireLease('lease', 'me', 60_000))) throw new Error('held')
        await redisTokens.releaseLease('lease', 'me')
      },
    },
    {
      name: 'Redis dedupe claim + complete',
      async: true,
      run: async () => {
        const key = `k${k++}`
        await redisDedupe.claim(key, 'me')
        await redisDedupe.complete(key, 'me')
      },
    },
    {
      name: 'Postgres compareAndSet',
      async: true,
      run: async () => {
        if (!(await pgTokens.compareAndSet('cas', RECORD, pgVersion))) throw new Error('lost')
        pgVersion++
      },
    },
    {
      name: 'Postgres lease acquire + release',
      async: true,
      run: async () => {
        if (!(await pgTokens.acquireLease('lease', 'me', 60_000))) throw new Error('held')
        await pgTokens.releaseLease('lease', 'me')
      },
    },
    {
      name: 'Postgres dedupe claim + complete',
      async: true,
      run: async () => {
        const key = `k${k++}`
        await pgDedupe.claim(key, 'me')
        await pgDedupe.complete(key, 'me')
      },
    },
  ]
  try {
    const results = await measure(cases, { rounds: 15, batchMs: 20 })
    const base = cases[0]!.name
    table(
      'shared stores on loopback (Redis, PostgreSQL): latency of one awaited operation',
      results,
      base,
    )
    const added = (name: string) =>
      (results.find((r) => r.name === name)!.nsPerOp -
        results.find((r) => r.name === base)!.nsPerOp) /
      1e3
    console.log('\n| added to a delivery, against the in-memory default | µs |')
    console.log('|---|---:|')
    for (const name of cases.slice(1, 4).map((c) => c.name)) {
      console.log(`| ${name} | ${added(name).toFixed(1)} |`)
    }
    return [
      {
        what: 'time RedisDedupeStore adds to a delivery, against in-memory dedupe',
        ratio: added(cases[1]!.name),
        limit: 150,
        kind: 'max',
        unit: ' µs',
      },
    ]
  } finally {
    await queue.queue.obliterate({ force: true })
    await queue.close()
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
    await pool.end()
  }
}
