import { expect, it } from 'vitest'
import { checkEvictionPolicy, RedisDedupeStore, RedisTokenStore } from '../src/index.js'
import { redis } from './helpers.js'

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
    await expect.poll(() => warnings.length).toBe(1)
    expect(warnings[0]).toMatch(/maxmemory-policy is allkeys-lru.*Set maxmemory-policy noeviction/)
    expect(quiet).toEqual([])
    expect(await checkEvictionPolicy(admin)).toEqual({ policy: 'allkeys-lru', evicts: true })
  } finally {
    await admin.config('SET', 'maxmemory-policy', before)
  }
})
