import {
  runDedupeStoreConformance,
  runLedgerScenarios,
  runLedgerStoreConformance,
  runRateCapStoreConformance,
  runRetryStoreConformance,
  runSubscriptionStoreConformance,
  runSweepStoreConformance,
  runTokenStoreConformance,
} from '@scheduling-kit/testing'
import { describe, expect, it } from 'vitest'
import {
  RedisDedupeStore,
  RedisLedgerStore,
  RedisSubscriptionStore,
  RedisSweepStore,
  RedisTokenStore,
} from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

const client = redis()

runTokenStoreConformance(
  () => new RedisTokenStore({ client, prefix: uniquePrefix('tokens'), logger: false }),
  { describe, it, name: 'RedisTokenStore: TokenStore conformance' },
)

runDedupeStoreConformance(
  (timing) =>
    new RedisDedupeStore({ client, prefix: uniquePrefix('dedupe'), logger: false, ...timing }),
  { describe, it, name: 'RedisDedupeStore: DedupeStore conformance' },
)

const subscriptionPrefix = uniquePrefix('subscriptions')
runSubscriptionStoreConformance(
  () => new RedisSubscriptionStore({ client, prefix: subscriptionPrefix, logger: false }),
  { describe, it, name: 'RedisSubscriptionStore: SubscriptionStore conformance' },
)

const ledgerPrefix = uniquePrefix('ledger')
runRetryStoreConformance(() => new RedisSweepStore({ client, prefix: uniquePrefix('sweep') }), {
  describe,
  it,
  name: 'RedisSweepStore: RetryStore conformance',
})

const sweepPrefix = uniquePrefix('sweep')
runSweepStoreConformance(
  () => new RedisSweepStore({ client, prefix: sweepPrefix, logger: false }),
  {
    describe,
    it,
    name: 'RedisSweepStore: SweepStore conformance',
    corrupt: async (name, field, value) =>
      void (await client.hset(`${sweepPrefix}sweep:{${name}}`, field, value)),
  },
)

describe('RedisSweepStore: a checkpoint that is not a number', () => {
  it('is told once, with its key, the stored text cleaned; read as none', async () => {
    const warnings: string[] = []
    const prefix = uniquePrefix('sweep-told')
    const store = new RedisSweepStore({
      client,
      prefix,
      logger: { warn: (line: string) => void warnings.push(line) },
    })
    await store.setCheckpoint('shard_a', 1_000, undefined)
    await client.hset(`${prefix}sweep:{shard_a}`, 'through', '\u001b]0;owned\u0007NaN')
    expect(await store.checkpoint('shard_a')).toBeUndefined()
    expect(await store.checkpoint('shard_a')).toBeUndefined()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('shard_a')
    expect([...warnings[0]!].some((c) => c.charCodeAt(0) < 0x20)).toBe(false)
  })
})

const ratePrefix = uniquePrefix('rate')
const RATE_FIELDS = { perSecond: 'ps', movedAt: 'mv', pausedUntil: 'pu', lastAt: 'la' } as const
runRateCapStoreConformance(() => new RedisSweepStore({ client, prefix: ratePrefix }), {
  describe,
  it,
  name: 'RedisSweepStore: RateCapStore conformance',
  corrupt: async (name, field, value) =>
    void (await client.hset(`${ratePrefix}rate:{${name}}`, RATE_FIELDS[field], value)),
})

runLedgerStoreConformance(
  (o) => new RedisLedgerStore({ client, prefix: ledgerPrefix, logger: false, ...o }),
  { describe, it, name: 'RedisLedgerStore: LedgerStore conformance' },
)

// In 8 shards: an account's keys in its shard, a listing of every account merged from each.
const shardedPrefix = uniquePrefix('ledger-sharded')
runLedgerStoreConformance(
  (o) => new RedisLedgerStore({ client, prefix: shardedPrefix, shards: 8, logger: false, ...o }),
  { describe, it, name: 'RedisLedgerStore in 8 shards: LedgerStore conformance' },
)

runLedgerScenarios(
  () =>
    new RedisLedgerStore({
      client,
      prefix: uniquePrefix('ledger-scenarios-sharded'),
      shards: 8,
      logger: false,
    }),
  { describe, it, name: 'RedisLedgerStore in 8 shards: ledger scenarios' },
)

runLedgerScenarios(
  () => new RedisLedgerStore({ client, prefix: uniquePrefix('ledger-scenarios'), logger: false }),
  {
    describe,
    it,
    name: 'RedisLedgerStore: ledger scenarios',
  },
)

describe('RedisTokenStore', () => {
  it('a write based on a read made before a delete cannot land after it (the version survives the delete)', async () => {
    const store = new RedisTokenStore({ client, prefix: uniquePrefix('aba'), logger: false })
    const record = { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 }
    await store.set('k', record)
    const read = (await store.get('k'))!
    await store.delete('k')
    expect(await store.get('k')).toBeUndefined()
    expect(await store.compareAndSet('k', { ...record, accessToken: 'new' }, undefined)).toBe(true)
    expect(await store.compareAndSet('k', { ...record, accessToken: 'stale' }, read.version)).toBe(
      false,
    )
    expect((await store.get('k'))!.accessToken).toBe('new')
  })

  it('keeps records without expiry, the deleted one only as a versioned tombstone for a day', async () => {
    const prefix = uniquePrefix('ttl')
    const store = new RedisTokenStore({ client, prefix, logger: false })
    await store.set('k', { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 })
    expect(await client.pttl(`${prefix}token:{k}`)).toBe(-1)
    expect(await store.acquireLease('k', 'me', 5_000)).toBe(true)
    await store.delete('k')
    expect(await client.exists(`${prefix}lease:{k}`)).toBe(0)
    const ttl = await client.pttl(`${prefix}token:{k}`)
    expect(ttl).toBeGreaterThan(23 * 3_600_000)
    await store.set('k', { accessToken: 'b', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 })
    expect(await client.pttl(`${prefix}token:{k}`)).toBe(-1)
  })

  it('the lease holder may extend its own lease; a stranger may not take it', async () => {
    const prefix = uniquePrefix('extend')
    const store = new RedisTokenStore({ client, prefix, logger: false })
    expect(await store.acquireLease('k', 'me', 1_000)).toBe(true)
    expect(await store.acquireLease('k', 'me', 60_000)).toBe(true)
    expect(await client.pttl(`${prefix}lease:{k}`)).toBeGreaterThan(50_000)
    expect(await store.acquireLease('k', 'other', 60_000)).toBe(false)
  })

  it('reloads its scripts when the server lost them (SCRIPT FLUSH, a restart, a failover)', async () => {
    const flushing = redis()
    const store = new RedisDedupeStore({ client, prefix: uniquePrefix('flush'), logger: false })
    expect(await store.claim('k', 'a')).toBe('claimed')
    await flushing.script('FLUSH')
    expect(await store.claim('k', 'b')).toBe('in_progress')
    await store.complete('k', 'a')
    expect(await store.claim('k', 'b')).toBe('completed')
  })

  it('10 connections claiming one key at once, 20 rounds: exactly one claimed each time', async () => {
    const prefix = uniquePrefix('conns')
    const stores = Array.from(
      { length: 10 },
      () => new RedisDedupeStore({ client: redis(), prefix, logger: false }),
    )
    await Promise.all(stores.map((s) => s.claim('warm-up', 'w')))
    for (let round = 0; round < 20; round++) {
      const results = await Promise.all(stores.map((s, i) => s.claim(`k${round}`, `o${i}`)))
      expect(results.filter((r) => r === 'claimed')).toHaveLength(1)
    }
  })

  it('refuses a missing client with the fix', () => {
    expect(() => new RedisTokenStore({} as never)).toThrow(/pass \{ client \}, an ioredis client/)
    expect(() => new RedisDedupeStore({ client, leaseMs: 0 })).toThrow(/leaseMs must be/)
  })
})

/** The hash tag Redis Cluster hashes (its rule: from the first `{` to the next `}`, if not empty). */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{')
  if (open < 0) return undefined
  const close = key.indexOf('}', open + 1)
  return close > open + 1 ? key.slice(open + 1, close) : undefined
}

describe('keys', () => {
  const record = { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 }
  const tricky = [
    'a\ud800',
    'a\udfff',
    'a\ufffd',
    '\uffff',
    '\uffff0061d800',
    '}x',
    '}',
    '{}',
    'a}b{c',
  ]

  it('keys that differ only in lone surrogates (or that look escaped) are distinct records and claims', async () => {
    const tokens = new RedisTokenStore({ client, prefix: uniquePrefix('lossless'), logger: false })
    const dedupe = new RedisDedupeStore({ client, prefix: uniquePrefix('lossless'), logger: false })
    for (const [i, key] of tricky.entries()) {
      await tokens.set(key, { ...record, accessToken: `t${i}` })
      expect(await dedupe.claim(key, `o${i}`)).toBe('claimed')
    }
    for (const [i, key] of tricky.entries())
      expect((await tokens.get(key))?.accessToken).toBe(`t${i}`)
  })

  it('a record and its lease share one Cluster hash slot whatever the key holds', async () => {
    const prefix = uniquePrefix('slots')
    const store = new RedisTokenStore({ client, prefix, logger: false })
    for (const key of [...tricky, 'plain', '{tag}']) {
      await store.set(key, record)
      expect(await store.acquireLease(key, 'me', 5_000)).toBe(true)
    }
    const written = await client.keys(`${prefix}*`)
    const tags = new Map<string, Set<string>>()
    for (const name of written) {
      const tag = hashTagOf(name)
      expect(tag, name).toBeDefined()
      const [kind] = name.slice(prefix.length).split(':')
      const set = tags.get(tag!) ?? new Set()
      set.add(kind!)
      tags.set(tag!, set)
    }
    expect(tags.size).toBe(tricky.length + 2)
    for (const kinds of tags.values()) expect([...kinds].sort()).toEqual(['lease', 'token'])
  })
})
