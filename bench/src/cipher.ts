// Credentials at rest: what the cipher adds to a token read (getAccessToken on a fresh token)
// and to a subscriptions secret lookup (the store's findByWebhook, the cache bypassed), with
// and without it, in the same rounds; and the same reads on Redis, for scale.
import { randomBytes } from 'node:crypto'
import {
  createCredentialCipher,
  createTokenManager,
  generateCredentialKey,
  MemorySubscriptionStore,
  MemoryTokenStore,
  type TokenStore,
} from '@scheduling-kit/core'
import { RedisSubscriptionStore, RedisTokenStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import { addedMicros, type Case, measure, type Target, table } from './harness.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

const record = () => ({
  accessToken: `at_${randomBytes(24).toString('base64url')}`,
  refreshToken: `rt_${randomBytes(24).toString('base64url')}`,
  tokenType: 'bearer',
  expiresAt: Date.now() + 7_200_000,
  obtainedAt: Date.now(),
  scope: 'events:read webhooks:write',
  account: { id: 'acct_1', name: 'Ada Lovelace', email: 'ada@example.com' },
})

const subscription = (id: string) => ({
  active: true,
  updatedAt: Date.now(),
  webhooks: [
    {
      id,
      secret: `whsec_${randomBytes(24).toString('base64url')}`,
      url: 'https://app.example.com/webhooks/scheduling',
      createdAt: Date.now(),
    },
  ],
})

const manager = (store: TokenStore) =>
  createTokenManager({
    store,
    oauth: {
      refresh: () => {
        throw new Error('a fresh token must not be refreshed')
      },
    },
  })

export async function cipherBench(): Promise<Target[]> {
  const cipher = createCredentialCipher({ keys: { k1: generateCredentialKey() }, current: 'k1' })
  const redis = new Redis(REDIS_URL)
  const prefix = `bench-cipher:${randomBytes(4).toString('hex')}:`
  try {
    const plainTokens = new MemoryTokenStore()
    const sealedTokens = new MemoryTokenStore({ cipher })
    const plainRedis = new RedisTokenStore({ client: redis, prefix, logger: false })
    const sealedRedis = new RedisTokenStore({
      client: redis,
      prefix: `${prefix}s:`,
      logger: false,
      cipher,
    })
    for (const store of [plainTokens, sealedTokens, plainRedis, sealedRedis])
      await store.set('acct_1', record())
    const plainHooks = new MemorySubscriptionStore()
    const sealedHooks = new MemorySubscriptionStore({ cipher })
    const plainRedisHooks = new RedisSubscriptionStore({ client: redis, prefix, logger: false })
    const sealedRedisHooks = new RedisSubscriptionStore({
      client: redis,
      prefix: `${prefix}s:`,
      logger: false,
      cipher,
    })
    for (const store of [plainHooks, sealedHooks, plainRedisHooks, sealedRedisHooks])
      await store.compareAndSet('acct_1', subscription('wh_bench'), undefined)

    const [m1, m2, m3, m4] = [plainTokens, sealedTokens, plainRedis, sealedRedis].map(manager)
    const memory: Case[] = [
      {
        name: 'getAccessToken, memory store',
        async: true,
        run: () => m1!.getAccessToken('acct_1'),
      },
      {
        name: 'getAccessToken, memory store, sealed',
        async: true,
        run: () => m2!.getAccessToken('acct_1'),
      },
      {
        name: 'secret lookup, memory store',
        async: true,
        run: () => plainHooks.findByWebhook('wh_bench'),
      },
      {
        name: 'secret lookup, memory store, sealed',
        async: true,
        run: () => sealedHooks.findByWebhook('wh_bench'),
      },
    ]
    for (const c of memory)
      if ((await c.run()) === undefined) throw new Error(`${c.name}: nothing read`)
    const inProcess = await measure(memory)
    table(
      'Credentials at rest: reads with and without the cipher (memory stores)',
      inProcess,
      memory[0]!.name,
    )
    const overRedis: Case[] = [
      { name: 'getAccessToken, Redis', async: true, run: () => m3!.getAccessToken('acct_1') },
      {
        name: 'getAccessToken, Redis, sealed',
        async: true,
        run: () => m4!.getAccessToken('acct_1'),
      },
      {
        name: 'secret lookup, Redis',
        async: true,
        run: () => plainRedisHooks.findByWebhook('wh_bench'),
      },
      {
        name: 'secret lookup, Redis, sealed',
        async: true,
        run: () => sealedRedisHooks.findByWebhook('wh_bench'),
      },
    ]
    for (const c of overRedis)
      if ((await c.run()) === undefined) throw new Error(`${c.name}: nothing read`)
    const remote = await measure(overRedis, { rounds: 15 })
    table('The same reads over Redis (loopback)', remote, overRedis[0]!.name)
    const added = (results: typeof inProcess, name: string) =>
      addedMicros(results, `${name}, sealed`, name)
    console.log(
      `\nAdded per read over Redis (for scale, noisy): getAccessToken ${added(remote, 'getAccessToken, Redis').toFixed(2)} µs, secret lookup ${added(remote, 'secret lookup, Redis').toFixed(2)} µs`,
    )
    // A record just written (a refresh, a reconnect) is opened in full once: 1,024 distinct
    // sealed values in turn, twice the cipher's cache, so every open misses.
    const sealed = await Promise.all(
      Array.from({ length: 1_024 }, () =>
        cipher.seal(JSON.stringify(record()), ['token', 'acct_1']),
      ),
    )
    const plain = JSON.stringify(record())
    let i = 0
    let j = 0
    const misses = await measure([
      { name: 'JSON.parse of the record', run: () => JSON.parse(plain) },
      {
        name: 'open, every time a value not seen before, then JSON.parse',
        async: true,
        run: async () =>
          JSON.parse((await cipher.open(sealed[i++ & 1_023]!, ['token', 'acct_1'])).plaintext),
      },
      {
        name: 'seal (each write)',
        async: true,
        run: () => cipher.seal(sealed[j++ & 1_023]!, ['token', 'acct_1']),
      },
    ])
    table(
      'The first read of a record after a write (a cache miss), and a write',
      misses,
      'JSON.parse of the record',
    )
    return [
      {
        what: 'getAccessToken: added by the cipher per read',
        ratio: added(inProcess, 'getAccessToken, memory store'),
        limit: 5,
        kind: 'max',
        unit: ' µs',
      },
      {
        what: 'subscriptions secret lookup: added by the cipher per read',
        ratio: added(inProcess, 'secret lookup, memory store'),
        limit: 5,
        kind: 'max',
        unit: ' µs',
      },
    ]
  } finally {
    await redis.del(...(await redis.keys(`${prefix}*`)))
    redis.disconnect()
  }
}
