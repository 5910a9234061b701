import { randomBytes } from 'node:crypto'
import { type LocalCluster, startCluster } from '@scheduling-kit/conformance/redis-cluster'
import {
  runDedupeStoreConformance,
  runLedgerStoreConformance,
  runRefreshRace,
  runSubscriptionStoreConformance,
  runTokenStoreConformance,
} from '@scheduling-kit/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  RedisDedupeStore,
  RedisLedgerStore,
  RedisSubscriptionStore,
  RedisTokenStore,
} from '../src/index.js'
import { uniquePrefix } from './helpers.js'

// The stores on a live Redis Cluster of three masters this file starts: every script's keys
// must share a hash slot (a CROSSSLOT error otherwise), whatever the token key holds.
let cluster: LocalCluster
beforeAll(async () => {
  cluster = await startCluster()
}, 180_000)
afterAll(() => cluster?.stop())

const client = () => cluster.client()

runTokenStoreConformance(
  () => new RedisTokenStore({ client: client(), prefix: uniquePrefix('c-tokens'), logger: false }),
  { describe, it, name: 'RedisTokenStore on a Redis Cluster: TokenStore conformance' },
)

runDedupeStoreConformance(
  (timing) =>
    new RedisDedupeStore({
      client: client(),
      prefix: uniquePrefix('c-dedupe'),
      logger: false,
      ...timing,
    }),
  { describe, it, name: 'RedisDedupeStore on a Redis Cluster: DedupeStore conformance' },
)

// One prefix and one client for the whole kit: its eight instances must share the store.
const subscriptionPrefix = uniquePrefix('c-subscriptions')
let subscriptionClient: ReturnType<typeof client> | undefined
runSubscriptionStoreConformance(
  () => {
    subscriptionClient ??= client()
    return new RedisSubscriptionStore({
      client: subscriptionClient,
      prefix: subscriptionPrefix,
      logger: false,
    })
  },
  {
    describe,
    it,
    name: 'RedisSubscriptionStore on a Redis Cluster: SubscriptionStore conformance',
  },
)

// The ledger's keys share one hash tag: each script stays in one slot of the cluster.
const ledgerPrefix = uniquePrefix('c-ledger')
let ledgerClient: ReturnType<typeof client> | undefined
runLedgerStoreConformance(
  (o) => {
    ledgerClient ??= client()
    return new RedisLedgerStore({ client: ledgerClient, prefix: ledgerPrefix, logger: false, ...o })
  },
  { describe, it, name: 'RedisLedgerStore on a Redis Cluster: LedgerStore conformance' },
)

it('keys of any shape (a leading "}", braces, lone surrogates): set, lease, compare-and-set and delete, no CROSSSLOT', async () => {
  const store = new RedisTokenStore({
    client: client(),
    prefix: uniquePrefix('c-keys'),
    logger: false,
  })
  const record = { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 }
  for (const key of [
    '}x',
    '}',
    '{}',
    'a}b{c',
    '{a}',
    'a\ud800',
    `k${randomBytes(4).toString('hex')}`,
  ]) {
    await store.set(key, record)
    expect(await store.acquireLease(key, 'me', 5_000)).toBe(true)
    const read = await store.get(key)
    expect(await store.compareAndSet(key, { ...record, accessToken: 'b' }, read!.version)).toBe(
      true,
    )
    await store.releaseLease(key, 'me')
    await store.delete(key)
    expect(await store.get(key)).toBeUndefined()
  }
})

it('the refresh race over the cluster: 8 processes x 25 callers, 5 expiries, one refresh each', async () => {
  process.env.CLUSTER_NODES = cluster.nodes.join(',')
  process.env.RACE_PREFIX = `sk-race:${randomBytes(4).toString('hex')}:`
  const report = await runRefreshRace({
    storeModule: new URL('./fixtures/cluster-race-store.mjs', import.meta.url),
  })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => r.refreshRequests)).toEqual([1, 1, 1, 1, 1])
}, 180_000)
