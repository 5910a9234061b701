import { type LocalCluster, startCluster } from '@scheduling-kit/conformance/redis-cluster'
import {
  createCredentialCipher,
  createWebhookSubscriptions,
  generateCredentialKey,
  isSchedulingError,
  type TokenRecord,
} from '@scheduling-kit/core'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { uniquePrefix } from './helpers.js'

// Scans over a Redis Cluster with a replica per master, a master SIGKILLed in the middle: its
// replica takes over within seconds. keys(), reencrypt() and reconcile() either cover every
// record or say they did not; none reports a whole result over part of the store.
let cluster: LocalCluster
beforeAll(async () => {
  cluster = await startCluster({ replicas: true })
}, 180_000)
afterAll(() => cluster?.stop())

const RECORDS = 600
const oldKey = generateCredentialKey()
const newKey = generateCredentialKey()

function record(i: number): TokenRecord {
  return {
    accessToken: `at_${i}`,
    refreshToken: `rt_${i}`,
    tokenType: 'bearer',
    expiresAt: Date.now() + 3_600_000,
    account: { id: `acct_${i}` },
  }
}

/**
 * After `after` reads of the client, once: kills the master of the last slots that still has
 * its replica (one of the three first made), one the scan has not reached yet.
 */
function killMidScan(client: Cluster, after: number): { killed: () => string | undefined } {
  let reads = 0
  let killed: string | undefined
  const hget = client.hget.bind(client)
  ;(client as { hget: unknown }).hget = async (...args: Parameters<typeof hget>) => {
    if (++reads === after) {
      const first = cluster.nodes.slice(0, 3)
      killed = (await cluster.masters()).filter((m) => first.includes(m)).at(-1)!
      cluster.kill(killed)
    }
    return hget(...args)
  }
  return { killed: () => killed }
}

describe('a master SIGKILLed mid-scan', () => {
  it('reencrypt(): every record resealed under the new key, or IncompleteScanError; never a whole result over part', async () => {
    const prefix = uniquePrefix('failover-tokens')
    const writer = new RedisTokenStore({
      client: cluster.client(),
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { old: oldKey }, current: 'old' }),
    })
    for (let i = 0; i < RECORDS; i++) await writer.set(`user-${i}`, record(i))
    const client = cluster.client()
    const rotating = new RedisTokenStore({
      client,
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { old: oldKey, new: newKey }, current: 'new' }),
    })
    const fault = killMidScan(client, RECORDS / 4)
    const result = await rotating.reencrypt().catch((error: unknown) => error)
    expect(fault.killed()).toBeDefined()
    const killed = fault.killed()!
    if (isSchedulingError(result)) {
      expect(result.code).toBe('scan_incomplete')
      // Once the cluster is whole again, the same store (its client made before the failover,
      // its topology stale) completes the sweep when asked again: no restart needed.
      while ((await cluster.masters()).includes(killed)) {
        await new Promise((r) => setTimeout(r, 200))
      }
      await expect(rotating.reencrypt()).resolves.toMatchObject({ failed: [] })
    } else {
      expect(result).toMatchObject({ failed: [] })
    }
    // Following the README: the old key goes once failed is empty. Every user still opens.
    const after = new RedisTokenStore({
      client: cluster.client(),
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { new: newKey }, current: 'new' }),
    })
    // The failover first: until the killed master's replica serves its slots (on a loaded
    // machine, as long as that takes; the test's time-out catches a hang). Then read until each
    // opens, a few rounds while clients learn the new master. A record left under the old key
    // never opens, and fails the test.
    while ((await cluster.masters()).includes(killed)) await new Promise((r) => setTimeout(r, 200))
    const unopened = new Set(Array.from({ length: RECORDS }, (_, i) => i))
    for (let round = 0; unopened.size > 0 && round < 40; round++) {
      await Promise.all(
        [...unopened].map((i) =>
          after.get(`user-${i}`).then(
            (r) => void (r?.accessToken === `at_${i}` && unopened.delete(i)),
            () => {},
          ),
        ),
      )
      if (unopened.size > 0) await new Promise((r) => setTimeout(r, 500))
    }
    expect([...unopened]).toHaveLength(0)
  }, 300_000)

  it('keys() and reconcile(): every account, or the scan says what it missed', async () => {
    const prefix = uniquePrefix('failover-subs')
    const writer = new RedisSubscriptionStore({ client: cluster.client(), prefix, logger: false })
    // Removed accounts with nothing left at the service: reconcile forgets each, no API call.
    for (let i = 0; i < RECORDS; i++)
      await writer.compareAndSet(
        `user-${i}`,
        {
          active: false,
          updatedAt: 0,
          webhooks: [
            {
              id: `wh_${i}`,
              secret: 's',
              url: 'https://a.test/h',
              createdAt: 0,
              removedAt: 0,
              gone: true,
            },
          ],
        },
        undefined,
      )
    const client = cluster.client()
    const store = new RedisSubscriptionStore({ client, prefix, logger: false })
    const fault = killMidScan(client, RECORDS / 4)
    const subscriptions = createWebhookSubscriptions({
      url: 'https://a.test/h',
      apiUrl: 'https://api.a.test/v1',
      tokens: { getAccessToken: () => Promise.reject(new Error('no API call expected')) },
      store,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    const report = await subscriptions.reconcile()
    expect(fault.killed()).toBeDefined()
    if (report.incomplete === undefined) expect(report.checked).toBeGreaterThanOrEqual(RECORDS)
    else expect((report.incomplete as { code?: string }).code).toBe('scan_incomplete')
    // Once the cluster settled, keys() lists every account left: through the same store, its
    // client made before the failover (no restart, no new client).
    const killed = fault.killed()!
    while ((await cluster.masters()).includes(killed)) await new Promise((r) => setTimeout(r, 200))
    const listed = new Set<string>()
    for await (const key of store.keys()) listed.add(key)
    const left = await Promise.all(
      Array.from({ length: RECORDS }, (_, i) => writer.get(`user-${i}`).catch(() => 'unreadable')),
    )
    expect(listed.size).toBe(left.filter((r) => r !== undefined).length)
  }, 120_000)

  it('a store whose client knew the old topology, asked while a master is down and again once the cluster is whole: the second sweep completes, no restart', async () => {
    const prefix = uniquePrefix('failover-stale')
    // A stopped node answers nothing, and ioredis waits for ever without a command time-out:
    // the one a production client of a cluster that can freeze needs too.
    const client = cluster.client({ redisOptions: { commandTimeout: 5_000 } })
    const store = new RedisTokenStore({
      client,
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { old: oldKey, new: newKey }, current: 'new' }),
    })
    const writer = new RedisTokenStore({
      client,
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { old: oldKey }, current: 'old' }),
    })
    for (let i = 0; i < 300; i++) await writer.set(`user-${i}`, record(i))
    // The master of some slots killed while its replica is stopped: no failover can happen,
    // so the sweep cannot complete (its rescans name the dead master). Then the replica
    // resumes and takes over: the same store, its client's topology stale, completes.
    const first = cluster.nodes.slice(0, 3)
    const killed = (await cluster.masters()).find((m) => first.includes(m))!
    const replica = await cluster.replicaOf(killed)
    cluster.pause(replica, true)
    let during: unknown
    try {
      cluster.kill(killed)
      during = await store.reencrypt().catch((error: unknown) => error)
    } finally {
      cluster.pause(replica, false)
    }
    expect(isSchedulingError(during) && during.code).toBe('scan_incomplete')
    expect((during as Error).message).toContain(killed)
    while (!(await cluster.masters()).includes(replica))
      await new Promise((r) => setTimeout(r, 200))
    const after = await store.reencrypt()
    expect(after.failed).toEqual([])
    expect(after.scanned).toBeGreaterThanOrEqual(300)
    const sealedNew = new RedisTokenStore({
      client,
      prefix,
      logger: false,
      cipher: createCredentialCipher({ keys: { new: newKey }, current: 'new' }),
    })
    const opened = await Promise.all(
      Array.from({ length: 300 }, (_, i) => sealedNew.get(`user-${i}`).then((r) => r?.accessToken)),
    )
    expect(opened).toEqual(Array.from({ length: 300 }, (_, i) => `at_${i}`))
  }, 120_000)
})
