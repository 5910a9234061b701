// Connected accounts' webhooks: what a subscriptions lookup adds to a delivery (memory store
// with and without the in-process cache, Redis, PostgreSQL) against a static secret, in the
// same rounds; and reconcile over 1,000 accounts against the fake service.
import { createHmac, randomBytes } from 'node:crypto'
import {
  createWebhookHandler,
  createWebhookSubscriptions,
  type Logger,
  MemorySubscriptionStore,
  type SubscriptionStore,
  type WebhookRequest,
} from '@scheduling-kit/core'
import { migrate, PostgresSubscriptionStore } from '@scheduling-kit/postgres'
import { RedisSubscriptionStore } from '@scheduling-kit/redis'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { Redis } from 'ioredis'
import pg from 'pg'
import { type Case, measure, ratio, type Target, table } from './harness.js'
import { eventBody } from './verify.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ACCOUNTS = 1_000
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const STATIC_SECRET = 'whsec_bench_static'

const sign = (body: Buffer, secret: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex').toUpperCase()}`

function request(body: Buffer, secret: string, webhookId: string): WebhookRequest {
  return {
    method: 'POST',
    path: '/webhooks/scheduling',
    headers: {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'x-service-signature': sign(body, secret),
      'x-service-webhook-id': webhookId,
    },
    body,
  }
}

/** Delivers the requests of `list` in turn, each to be answered 200. */
function deliver(handler: ReturnType<typeof createWebhookHandler>, list: WebhookRequest[]) {
  let n = 0
  return async () => {
    const answer = await handler.handle(list[n++ % list.length]!)
    if (answer?.status !== 200) throw new Error(`answered ${answer?.status} ${answer?.body}`)
  }
}

/** 1,000 accounts, each with one webhook, written straight into the store. */
async function fill(
  store: SubscriptionStore,
  run: string,
  hooks: ReadonlyArray<{ id: string; secret: string }>,
) {
  for (const [i, hook] of hooks.entries()) {
    await store.compareAndSet(
      `acct_${run}_${i}`,
      {
        active: true,
        updatedAt: Date.now(),
        webhooks: [{ ...hook, url: 'https://app.example.test/h', createdAt: Date.now() }],
      },
      undefined,
    )
  }
}

async function lookupCost(): Promise<Target[]> {
  const run = randomBytes(4).toString('hex')
  const redis = new Redis(REDIS_URL)
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schema = `sk_bench_subs_${run}`
  await migrate(pool, { schema })
  const stores = {
    memory: new MemorySubscriptionStore(),
    redis: new RedisSubscriptionStore({ client: redis, prefix: `sk-bench:${run}:`, logger: false }),
    postgres: new PostgresSubscriptionStore({ pool, schema }),
  }
  const hooks = Array.from({ length: ACCOUNTS }, (_, i) => ({
    id: `wh_${run}_${i}`,
    secret: randomBytes(24).toString('base64url'),
  }))
  for (const store of Object.values(stores)) await fill(store, run, hooks)
  // The same 2 KiB bodies everywhere; deliveries cycle over the 1,000 accounts' webhooks.
  const bodies = Array.from({ length: ACCOUNTS }, (_, i) =>
    Buffer.from(eventBody(2048, `payload_${run}${String(i).padStart(6, '0')}`)),
  )
  const staticRequests = bodies.map((b) => request(b, STATIC_SECRET, 'wh_static'))
  const accountRequests = bodies.map((b, i) => request(b, hooks[i]!.secret, hooks[i]!.id))
  const tokens = { getAccessToken: async () => 'unused' }
  const handlerFor = (store: SubscriptionStore, cacheMs: number) =>
    createWebhookHandler({
      subscriptions: createWebhookSubscriptions({
        url: 'https://app.example.test/h',
        tokens,
        apiUrl: 'https://api.example.test/v1',
        store,
        cacheMs,
        logger: quiet,
      }),
      dedupe: false,
      logger: quiet,
      onAny: () => {},
    })
  // Cache hits: every webhook looked up once, well inside cacheMs, before the rounds.
  const warm = {
    memory: handlerFor(stores.memory, 600_000),
    redis: handlerFor(stores.redis, 600_000),
  }
  for (const handler of Object.values(warm))
    for (const r of accountRequests) await handler.handle(r)
  await warm.memory.handle(request(bodies[0]!, hooks[0]!.secret, hooks[0]!.id))
  const staticHandler = createWebhookHandler({
    secret: STATIC_SECRET,
    dedupe: false,
    logger: quiet,
    onAny: () => {},
  })
  const timed = (name: string, handler: ReturnType<typeof createWebhookHandler>): Case => ({
    name,
    async: true,
    run: deliver(handler, name === 'static secret' ? staticRequests : accountRequests),
  })
  // In-process cases, timed together in many short rounds (their ratios are a few percent);
  // the store round trips in rounds of their own.
  // Like for like: one account's deliveries verify with one secret, as the static one does.
  // Over 1,000 accounts, HMAC keys change with every delivery, which costs some percent
  // whoever looks the secret up: the secret function of before (`secret: (id) => ...`) shows it.
  const oneAccount = accountRequests.map((_, i) =>
    request(bodies[i]!, hooks[0]!.secret, hooks[0]!.id),
  )
  const bySecretFunction = new Map(hooks.map((h) => [h.id, h.secret]))
  const secretFunction = createWebhookHandler({
    secret: (id) => bySecretFunction.get(id!),
    dedupe: false,
    logger: quiet,
    onAny: () => {},
  })
  const fast: Case[] = [
    timed('static secret', staticHandler),
    {
      name: 'subscriptions, memory store, cache hit, one account',
      async: true,
      run: deliver(warm.memory, oneAccount),
    },
    timed('subscriptions, memory store, cache hit', warm.memory),
    timed('subscriptions, Redis, cache hit', warm.redis),
    timed('secret function, 1,000 secrets', secretFunction),
    timed('subscriptions, memory store, no cache', handlerFor(stores.memory, 0)),
  ]
  const slow: Case[] = [
    timed('static secret', staticHandler),
    timed('subscriptions, Redis, no cache', handlerFor(stores.redis, 0)),
    timed('subscriptions, PostgreSQL, no cache', handlerFor(stores.postgres, 0)),
    { name: 'one Redis GET (the round trip)', async: true, run: () => redis.get('sk-bench:none') },
    {
      name: 'one PostgreSQL SELECT 1 (the round trip)',
      async: true,
      run: () => pool.query('SELECT 1'),
    },
  ]
  try {
    const inProcess = await measure(fast, { rounds: 31, batchMs: 30 })
    table(
      "A 2 KiB delivery verified with its account webhook's secret, in process (1,000 accounts; dedupe off)",
      inProcess,
      'static secret',
    )
    const withStores = await measure(slow, { rounds: 15, batchMs: 20 })
    table('The same, each delivery reading the store', withStores, 'static secret')
    const all = [...inProcess, ...withStores.slice(1)]
    const ns = (name: string) => all.find((r) => r.name === name)!.nsPerOp
    const added = (name: string) => (ns(name) - ns('static secret')) / 1_000
    console.log('\n| lookup | µs added per delivery |\n|---|---:|')
    for (const name of [
      'subscriptions, memory store, cache hit, one account',
      'subscriptions, memory store, cache hit',
      'secret function, 1,000 secrets',
      'subscriptions, Redis, cache hit',
      'subscriptions, memory store, no cache',
      'subscriptions, Redis, no cache',
      'subscriptions, PostgreSQL, no cache',
    ])
      console.log(`| ${name} | ${added(name).toFixed(1)} |`)
    const redisTrip = ns('one Redis GET (the round trip)') / 1_000
    const pgTrip = ns('one PostgreSQL SELECT 1 (the round trip)') / 1_000
    console.log(
      `\nOne round trip here: Redis ${redisTrip.toFixed(1)} µs, PostgreSQL ${pgTrip.toFixed(1)} µs.`,
    )
    return [
      // One round trip (a Lua script reads the index and the record) and a JSON parse: at
      // most two GETs' worth, whatever this machine's loopback costs.
      {
        what: 'subscriptions lookup on Redis, no cache: µs added / one Redis GET',
        ratio: added('subscriptions, Redis, no cache') / redisTrip,
        limit: 2,
        kind: 'max',
      },
      {
        what: 'subscriptions, memory store, cache hit (one account) / static secret',
        ratio: ratio(
          inProcess,
          'subscriptions, memory store, cache hit, one account',
          'static secret',
        ),
        limit: 1.05,
        kind: 'max',
      },
    ]
  } finally {
    redis.disconnect()
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => {})
    await pool.end()
  }
}

/**
 * Connects `accounts` accounts, ensures their webhooks, makes 10% drift, reconciles twice:
 * API requests (per account), wall time, and the heap a run grew by.
 */
async function reconcileCost(accounts: number): Promise<void> {
  const service = await startFakeSchedulingService()
  try {
    const tokens = new Map<string, string>()
    for (let i = 0; i < accounts; i++) {
      const account = `acct_${i}`
      tokens.set(account, service.auth.grant(account).access_token)
    }
    const subscriptions = createWebhookSubscriptions({
      url: 'https://app.example.test/webhooks/scheduling',
      tokens: { getAccessToken: async (key) => tokens.get(key)! },
      apiUrl: service.apiUrl,
      store: new MemorySubscriptionStore(),
      logger: quiet,
    })
    const timed = async <T>(work: () => Promise<T>) => {
      const requests = service.api.requests
      globalThis.gc?.()
      const heap = process.memoryUsage().heapUsed
      const started = performance.now()
      const result = await work()
      const ms = performance.now() - started
      globalThis.gc?.()
      const grown = (process.memoryUsage().heapUsed - heap) / 1e6
      return { result, requests: service.api.requests - requests, ms, grown }
    }
    const ensured = await timed(async () => {
      const keys = [...tokens.keys()]
      for (let i = 0; i < keys.length; i += 8)
        await Promise.all(keys.slice(i, i + 8).map((k) => subscriptions.ensure(k)))
    })
    for (let i = 0; i < accounts; i += 20) {
      const hook = service.webhooks(`acct_${i}`)[0]!
      if (i % 40 === 0) service.setWebhookState(hook.id, 'disabled')
      else service.dropWebhook(hook.id)
    }
    const repaired = await timed(() => subscriptions.reconcile())
    const quiet2 = await timed(() => subscriptions.reconcile())
    console.log(`\nreconcile over ${accounts} accounts against the fake service (concurrency 4)`)
    console.log(
      '| run | API requests | per account | wall ms | heap kept after, MB | created | deleted |\n|---|---:|---:|---:|---:|---:|---:|',
    )
    const line = (
      what: string,
      r: { requests: number; ms: number; grown: number },
      created: number,
      deleted: number,
    ) =>
      console.log(
        `| ${what} | ${r.requests} | ${(r.requests / accounts).toFixed(2)} | ${r.ms.toFixed(0)} | ${r.grown.toFixed(1)} | ${created} | ${deleted} |`,
      )
    line('ensure each account (8 at a time)', ensured, accounts, 0)
    line(
      'reconcile, 5% disabled + 5% lost',
      repaired,
      repaired.result.created,
      repaired.result.deleted,
    )
    line('reconcile, nothing to do', quiet2, quiet2.result.created, quiet2.result.deleted)
  } finally {
    await service.close()
  }
}

/** p50 and p99 of `n` calls, in ms. */
async function latencies(n: number, call: (i: number) => Promise<unknown>) {
  const times: number[] = []
  for (let i = 0; i < n; i++) {
    const started = performance.now()
    await call(i)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: times[Math.floor(n * 0.5)]!, p99: times[Math.floor(n * 0.99)]! }
}

/**
 * The PostgreSQL lookup by webhook id at 1,000 and 100,000 accounts, known and unknown ids,
 * beside the statement of before (the GIN index on the id array), on tables never analysed.
 */
async function postgresLookupGrowth(): Promise<Target[]> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
  const p50s: Record<string, number> = {}
  console.log(
    '\nPostgreSQL lookup by webhook id (findByWebhook), 2,000 calls each, ms\n| accounts | ids | p50 | p99 | the statement of before: p50 | p99 |\n|---:|---|---:|---:|---:|---:|',
  )
  try {
    for (const accounts of [1_000, 100_000]) {
      const schema = `sk_bench_lookup_${randomBytes(4).toString('hex')}`
      await migrate(pool, { schema })
      const t = `"${schema}".scheduling_kit_subscriptions`
      await pool.query(
        `INSERT INTO ${t} (key, account, record, webhook_ids, version)
         SELECT 'acct_' || i, 'acct_' || i,
           jsonb_build_object('active', true, 'updatedAt', 0, 'webhooks', jsonb_build_array(
             jsonb_build_object('id', 'wh_' || i, 'secret', 's', 'url', 'https://a.test/h', 'createdAt', 0))),
           ARRAY['wh_' || i], 1
         FROM generate_series(1, ${accounts}) AS i`,
      )
      await pool.query(
        `INSERT INTO "${schema}"."scheduling_kit_subscriptions$by_webhook" (webhook_id, key)
         SELECT 'wh_' || i, 'acct_' || i FROM generate_series(1, ${accounts}) AS i`,
      )
      const store = new PostgresSubscriptionStore({ pool, schema })
      const before = (id: string) =>
        pool.query(
          `SELECT key, account, record, version FROM ${t}
           WHERE webhook_ids @> ARRAY[$1::text] AND record IS NOT NULL LIMIT 1`,
          [id],
        )
      const known = (i: number) => `wh_${1 + ((i * 7919) % accounts)}`
      const unknown = (i: number) => `wh_none_${i}`
      try {
        for (const [what, id] of [
          ['known', known],
          ['unknown', unknown],
        ] as const) {
          const now = await latencies(2_000, (i) => store.findByWebhook(id(i)))
          const old = await latencies(accounts > 10_000 ? 200 : 2_000, (i) => before(id(i)))
          p50s[`${accounts} ${what}`] = now.p50
          console.log(
            `| ${accounts.toLocaleString('en')} | ${what} | ${now.p50.toFixed(3)} | ${now.p99.toFixed(3)} | ${old.p50.toFixed(3)} | ${old.p99.toFixed(3)} |`,
          )
        }
      } finally {
        await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
      }
    }
  } finally {
    await pool.end()
  }
  return ['known', 'unknown'].map((what) => ({
    what: `PostgreSQL lookup p50, ${what} id: 100,000 accounts / 1,000`,
    ratio: p50s[`100000 ${what}`]! / p50s[`1000 ${what}`]!,
    limit: 1.5,
    kind: 'max' as const,
  }))
}

/** `count` accounts with one webhook each (`wh_<i>`, secret `s_<i>`), written by SQL. */
async function bulkFill(pool: pg.Pool, schema: string, count: number): Promise<void> {
  const t = `"${schema}".scheduling_kit_subscriptions`
  await pool.query(
    `INSERT INTO ${t} (key, account, record, webhook_ids, version)
     SELECT 'acct_' || i, 'acct_' || i,
       jsonb_build_object('active', true, 'updatedAt', 0, 'webhooks', jsonb_build_array(
         jsonb_build_object('id', 'wh_' || i, 'secret', 's_' || i, 'url', 'https://a.test/h', 'createdAt', 0))),
       ARRAY['wh_' || i], 1
     FROM generate_series(0, ${count - 1}) AS i`,
  )
  await pool.query(
    `INSERT INTO "${schema}"."scheduling_kit_subscriptions$by_webhook" (webhook_id, key)
     SELECT 'wh_' || i, 'acct_' || i FROM generate_series(0, ${count - 1}) AS i`,
  )
}

/**
 * The owners' cache as active webhooks grow: deliveries cycling over every webhook of 1,000 and
 * of 100,000 accounts (PostgreSQL store, `cacheMs` 10 minutes, every webhook delivered to once
 * before the rounds), beside the bound of before (10,000 owners) at 100,000, and the heap the
 * cache keeps per webhook.
 */
async function ownerCacheGrowth(): Promise<Target[]> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schemas: string[] = []
  const body = Buffer.from(eventBody(512, 'payload_owner_cache'))
  const tokens = { getAccessToken: async () => 'unused' }
  try {
    const cases: Case[] = []
    const heapPerOwner: number[] = []
    for (const [count, cacheSize] of [
      [1_000, undefined],
      [100_000, undefined],
      [100_000, 10_000],
    ] as const) {
      const schema = `sk_bench_owners_${randomBytes(4).toString('hex')}`
      schemas.push(schema)
      await migrate(pool, { schema })
      await bulkFill(pool, schema, count)
      const handler = createWebhookHandler({
        subscriptions: createWebhookSubscriptions({
          url: 'https://app.example.test/h',
          tokens,
          apiUrl: 'https://api.example.test/v1',
          store: new PostgresSubscriptionStore({ pool, schema }),
          cacheMs: 600_000,
          ...(cacheSize === undefined ? {} : { cacheSize }),
          logger: quiet,
        }),
        dedupe: false,
        logger: quiet,
        onAny: () => {},
      })
      const requests = Array.from({ length: count }, (_, i) => request(body, `s_${i}`, `wh_${i}`))
      globalThis.gc?.()
      const heap = process.memoryUsage().heapUsed
      for (const r of requests) await handler.handle(r)
      globalThis.gc?.()
      if (cacheSize === undefined)
        heapPerOwner.push((process.memoryUsage().heapUsed - heap) / count)
      const name = `${count.toLocaleString('en')} webhooks${cacheSize === undefined ? '' : `, a cache of ${cacheSize.toLocaleString('en')} (the bound of before)`}`
      cases.push({ name, async: true, run: deliver(handler, requests) })
    }
    const results = await measure(cases, { rounds: 15, batchMs: 40 })
    table(
      "A delivery looked up in the owners' cache as active webhooks grow (PostgreSQL store, every webhook in turn; dedupe off)",
      results,
      '1,000 webhooks',
    )
    console.log(
      `Heap kept per webhook delivered to (the cache entry, the request's share aside): ${heapPerOwner.map((b) => `${Math.round(b)} B`).join(' at 1,000, ')} at 100,000.`,
    )
    return [
      {
        what: "owners' cache: a delivery at 100,000 active webhooks / at 1,000",
        ratio: ratio(results, '100,000 webhooks', '1,000 webhooks'),
        limit: 1.2,
        kind: 'max',
      },
    ]
  } finally {
    for (const schema of schemas)
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`).catch(() => {})
    await pool.end()
  }
}

export async function subscriptionsBench(): Promise<Target[]> {
  const targets = await lookupCost()
  targets.push(...(await postgresLookupGrowth()))
  targets.push(...(await ownerCacheGrowth()))
  await reconcileCost(1_000)
  await reconcileCost(10_000)
  return targets
}
