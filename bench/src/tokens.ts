import { randomBytes } from 'node:crypto'
import { createTokenManager, MemoryTokenStore, type TokenStore } from '@scheduling-kit/core'
import { migrate, PostgresTokenStore } from '@scheduling-kit/postgres'
import { RedisTokenStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import pg from 'pg'
import { type Case, measure, ratio, type Target, table } from './harness.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * `getAccessToken` on a fresh token, on each store, against an awaited `Map.get` (the same
 * async shape with nothing behind it): the manager keeps the token in process until its
 * refresh time, so no store is read. The bare store reads are shown for scale.
 */
export async function tokenBench(): Promise<Target[]> {
  const run = randomBytes(4).toString('hex')
  const now = Date.now()
  const record = {
    accessToken: 'at_bench',
    refreshToken: 'rt_bench',
    tokenType: 'bearer',
    expiresAt: now + 7_200_000,
    obtainedAt: now,
    account: { id: 'acct_1', name: 'Ada' },
  }
  const redis = new Redis(REDIS_URL)
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
  const schema = `sk_bench_tokens_${run}`
  const prefix = `sk-bench-tokens:${run}:`
  try {
    await migrate(pool, { schema })
    const stores: [string, TokenStore][] = [
      ['MemoryTokenStore', new MemoryTokenStore()],
      ['RedisTokenStore', new RedisTokenStore({ client: redis, prefix, logger: false })],
      ['PostgresTokenStore', new PostgresTokenStore({ pool, schema })],
    ]
    const map = new Map([['acct_1', 'at_bench']])
    const mapGet = async (key: string) => map.get(key)
    const cases: Case[] = [{ name: 'awaited Map.get', async: true, run: () => mapGet('acct_1') }]
    const bare: Case[] = [cases[0]!]
    for (const [name, store] of stores) {
      await store.set('acct_1', record)
      const manager = createTokenManager({
        store,
        oauth: {
          refresh: () => {
            throw new Error('a fresh token must not be refreshed')
          },
        },
      })
      if ((await manager.getAccessToken('acct_1')) !== 'at_bench')
        throw new Error('unexpected token')
      cases.push({
        name: `getAccessToken, fresh token, ${name}`,
        async: true,
        run: () => manager.getAccessToken('acct_1'),
      })
      bare.push({ name: `bare ${name}.get`, async: true, run: () => store.get('acct_1') })
    }
    // The store reads (for scale) are timed apart: their garbage (a clone, a parsed reply)
    // would be collected inside whichever case came next in a round. Twice the usual rounds:
    // the fresh cases differ by a few ns, and the ratio is taken per round.
    const results = await measure(cases, { rounds: 41 })
    table('getAccessToken on a fresh token', results, cases[0]!.name)
    table('the stores read, for scale', await measure(bare), bare[0]!.name)
    return stores.map(([name]) => ({
      what: `getAccessToken, fresh token, ${name} / awaited Map.get`,
      ratio: ratio(results, `getAccessToken, fresh token, ${name}`, cases[0]!.name),
      limit: 1.2,
      kind: 'max' as const,
    }))
  } finally {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await pool.end()
  }
}
