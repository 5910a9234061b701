import { Redis } from 'ioredis'
import { expect, it } from 'vitest'
import {
  checkEvictionPolicy,
  checkPersistence,
  RedisDedupeStore,
  RedisTokenStore,
} from '../src/index.js'
import { REDIS_URL, redis } from './helpers.js'

it('warns once per client at start-up when the server can evict keys, and not under noeviction', async () => {
  const admin = redis()
  const [, before] = (await admin.config('GET', 'maxmemory-policy')) as [string, string]
  try {
    await admin.config('SET', 'maxmemory-policy', 'noeviction')
    const quiet: string[] = []
    const quietClient = redis()
    new RedisTokenStore({ client: quietClient, logger: { warn: (m) => quiet.push(m) } })
    await quietClient.ping() // one connection answers in order: the check has its answer
    await new Promise((r) => setTimeout(r, 50))
    expect(await checkEvictionPolicy(admin)).toEqual({ policy: 'noeviction', evicts: false })

    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru')
    const warnings: string[] = []
    const logger = { warn: (m: string) => void warnings.push(m) }
    const client = redis()
    new RedisTokenStore({ client, logger })
    new RedisDedupeStore({ client, logger })
    const evicting = () => warnings.filter((w) => /maxmemory-policy/.test(w))
    await expect.poll(() => evicting().length).toBe(1)
    expect(evicting()[0]).toMatch(
      /maxmemory-policy is allkeys-lru.*Set maxmemory-policy noeviction/,
    )
    expect(quiet.filter((w) => /maxmemory-policy/.test(w))).toEqual([])
    expect(await checkEvictionPolicy(admin)).toEqual({ policy: 'allkeys-lru', evicts: true })
  } finally {
    await admin.config('SET', 'maxmemory-policy', before)
  }
})

it('checks once connected: a store made before its client connects reads the real policy', async () => {
  const admin = redis()
  const [, before] = (await admin.config('GET', 'maxmemory-policy')) as [string, string]
  try {
    await admin.config('SET', 'maxmemory-policy', 'noeviction')
    const lines: string[] = []
    // No offline queue (as the BullMQ queue's client): a command before it connects is refused.
    const client = new Redis(REDIS_URL, { enableOfflineQueue: false })
    new RedisTokenStore({ client, logger: { warn: (m) => lines.push(m) } })
    await new Promise<void>((resolve) => client.once('ready', () => resolve()))
    await client.ping()
    await new Promise((r) => setTimeout(r, 50))
    expect(lines.filter((l) => /maxmemory-policy/.test(l))).toEqual([])
    client.disconnect()
  } finally {
    await admin.config('SET', 'maxmemory-policy', before)
  }
})

it('warns once when the server keeps no append-only file, not when it does', async () => {
  const admin = redis()
  const [, before] = (await admin.config('GET', 'appendonly')) as [string, string]
  try {
    await admin.config('SET', 'appendonly', 'no')
    expect(await checkPersistence(admin)).toEqual({ appendonly: 'no', durable: false })
    const lines: string[] = []
    const client = redis()
    new RedisTokenStore({ client, logger: { warn: (m) => lines.push(m) } })
    new RedisDedupeStore({ client, logger: { warn: (m) => lines.push(m) } })
    await expect.poll(() => lines.filter((l) => /appendonly is no/.test(l)).length).toBe(1)
    expect(lines.find((l) => /appendonly/.test(l))).toMatch(/appendfsync everysec/)

    await admin.config('SET', 'appendonly', 'yes')
    expect(await checkPersistence(admin)).toEqual({ appendonly: 'yes', durable: true })
    const quiet: string[] = []
    const durable = redis()
    new RedisTokenStore({ client: durable, logger: { warn: (m) => quiet.push(m) } })
    await durable.ping()
    await new Promise((r) => setTimeout(r, 50))
    expect(quiet.filter((l) => /appendonly/.test(l))).toEqual([])
  } finally {
    await admin.config('SET', 'appendonly', before)
  }
})
