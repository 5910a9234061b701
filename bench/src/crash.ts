import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  createOAuthClient,
  createTokenManager,
  MemoryTokenStore,
  type TokenRecord,
  type TokenStore,
} from '@scheduling-kit/core'
import { migrate, PostgresTokenStore } from '@scheduling-kit/postgres'
import { RedisTokenStore } from '@scheduling-kit/redis'
import { Redis } from 'ioredis'
import pg from 'pg'
import { median, type Target } from './harness.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ROUNDS = Number(process.env.BENCH_CRASH_ROUNDS ?? 300)

/** A token endpoint that answers every refresh with new tokens, at once. */
async function tokenEndpoint(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          access_token: `at_${randomBytes(12).toString('hex')}`,
          refresh_token: `rt_${randomBytes(12).toString('hex')}`,
          expires_in: 7200,
          token_type: 'bearer',
        }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  }
}

const p99 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.99)]!

/**
 * The crash window: from the moment the token endpoint's answer reaches this process (the
 * server has spent the old refresh token) to the moment the store acknowledges the write of
 * the new tokens. A process killed inside it loses the connection against a strict server.
 * Measured per store beside the store's own compare-and-set round trip in the same run: the
 * window should be that round trip plus reading the answer, with nothing else awaited.
 */
export async function crashWindowBench(): Promise<Target[]> {
  const endpoint = await tokenEndpoint()
  const run = randomBytes(4).toString('hex')
  const redis = new Redis(REDIS_URL)
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
  const schema = `sk_bench_crash_${run}`
  await migrate(pool, { schema })
  const stores: Array<[string, TokenStore]> = [
    ['MemoryTokenStore', new MemoryTokenStore()],
    [
      'RedisTokenStore',
      new RedisTokenStore({ client: redis, prefix: `sk-bench:${run}:`, logger: false }),
    ],
    ['PostgresTokenStore', new PostgresTokenStore({ pool, schema })],
  ]
  console.log(
    `\nCrash window (answer received -> write acknowledged), ${ROUNDS} refreshes per store`,
  )
  console.log('| store | window median | window p99 | store CAS median | window - CAS (median) |')
  console.log('|---|---:|---:|---:|---:|')
  const results: Target[] = []
  for (const [name, store] of stores) {
    let answeredAt = 0
    const windows: number[] = []
    const writes: number[] = []
    const measured: TokenStore = {
      get: (key) => store.get(key),
      set: (key, record) => store.set(key, record),
      delete: (key) => store.delete(key),
      acquireLease: (key, owner, ttl) => store.acquireLease!(key, owner, ttl),
      releaseLease: (key, owner) => store.releaseLease!(key, owner),
      compareAndSet: async (key, record, version) => {
        const started = performance.now()
        const written = await store.compareAndSet!(key, record, version)
        const done = performance.now()
        writes.push(done - started)
        if (answeredAt > 0) windows.push(done - answeredAt)
        answeredAt = 0
        return written
      },
    }
    const oauth = createOAuthClient({
      authUrl: endpoint.url,
      clientId: 'bench',
      clientSecret: 'bench',
      redirectUri: 'http://127.0.0.1:9/callback',
      fetch: async (input, init) => {
        const response = await globalThis.fetch(input, init)
        answeredAt = performance.now()
        return response
      },
    })
    // Each round's expired record read from the store, not the token kept in process.
    const manager = createTokenManager({
      oauth,
      store: measured,
      lease: { pollMs: 1 },
      revalidateMs: 0,
    })
    const key = `crash:${run}`
    const expired: TokenRecord = {
      accessToken: 'at_old',
      refreshToken: 'rt_old',
      tokenType: 'bearer',
      expiresAt: Date.now() - 1_000,
      obtainedAt: Date.now() - 7_201_000,
    }
    for (let i = 0; i < ROUNDS; i++) {
      const { version: _, ...current } = (await store.get(key)) ?? expired
      await store.set(key, { ...current, expiresAt: Date.now() - 1_000 })
      await manager.getAccessToken(key)
    }
    await manager.close()
    const window = median(windows.slice(20))
    const cas = median(writes.slice(20))
    console.log(
      `| ${name} | ${(window * 1000).toFixed(0)} µs | ${(p99(windows.slice(20)) * 1000).toFixed(0)} µs | ${(cas * 1000).toFixed(0)} µs | ${((window - cas) * 1000).toFixed(0)} µs |`,
    )
    results.push({
      what: `crash window less the store write, ${name} (median)`,
      ratio: (window - cas) * 1000,
      limit: 500,
      kind: 'max',
      unit: ' µs',
    })
  }
  endpoint.close()
  redis.disconnect()
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
  await pool.end()
  return results
}
