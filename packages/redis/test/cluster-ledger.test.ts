import { spawn } from 'node:child_process'
import { type LocalCluster, startCluster } from '@scheduling-kit/conformance/redis-cluster'
import { accountKey } from '@scheduling-kit/core/store'
import fc from 'fast-check'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { RedisLedgerStore } from '../src/index.js'
import { slotOf } from '../src/slots.js'
import { uniquePrefix } from './helpers.js'
import {
  envelope,
  type Instance,
  instance,
  post,
  SECRET,
  stopInstances,
} from './ledger-instances.js'

// The ledger spread over a live Redis Cluster of three masters: shards by account, each its own
// hash tag, so a many-account load is shared by the masters; and slots migrated by
// `redis-cli --cluster reshard` while three app instances (OS processes) take deliveries, each
// sent to two of them at once as the service's retries race: none lost, none run twice.

let cluster: LocalCluster
beforeAll(async () => {
  cluster = await startCluster()
}, 180_000)
afterEach(stopInstances)
afterAll(() => cluster?.stop())

/** A direct connection to one node. */
function node(address: string): Redis {
  const [host, port] = address.split(':')
  return new Redis(Number(port), host!, { lazyConnect: false })
}

async function onEachMaster<T>(run: (client: Redis) => Promise<T>): Promise<T[]> {
  const masters = await cluster.masters()
  return Promise.all(
    masters.map(async (address) => {
      const client = node(address)
      try {
        return await run(client)
      } finally {
        client.disconnect()
      }
    }),
  )
}

/** Commands each master served since its stats were reset, but the cluster's own and ours. */
const NOT_THE_LEDGER = /^cmdstat_(cluster|info|config|ping|command|client|hello|readonly|asking)/
async function commandsPerMaster(): Promise<number[]> {
  return onEachMaster(async (client) => {
    let calls = 0
    for (const line of (await client.info('commandstats')).split('\n')) {
      const [name, stats] = line.trim().split(':')
      if (stats === undefined || NOT_THE_LEDGER.test(name!)) continue
      calls += Number(/calls=(\d+)/.exec(stats)?.[1] ?? 0)
    }
    return calls
  })
}

/** How many slots the master at `address` owns, as it says itself (CLUSTER NODES). */
async function slotsOf(address: string): Promise<number> {
  const client = node(address)
  try {
    const own = String(await client.cluster('NODES'))
      .split('\n')
      .find((line) => line.includes('myself'))!
    let count = 0
    // Ranges `a-b` or single slots after the eighth field; `[...]` marks a migration under way.
    for (const range of own.trim().split(' ').slice(8)) {
      if (range.startsWith('[')) continue
      const [low, high] = range.split('-').map(Number)
      count += (high ?? low!) - low! + 1
    }
    return count
  } finally {
    client.disconnect()
  }
}

it("the slot of any key is the cluster's own (CLUSTER KEYSLOT)", async () => {
  const client = cluster.client()
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: 'grapheme-ascii' }), fc.string(), async (a, b) => {
      for (const key of [a, `${a}{${b}}x`, `{${b}}`])
        expect(slotOf(key), key).toBe(Number(await client.cluster('KEYSLOT', key)))
    }),
    { numRuns: 150 },
  )
})

it('on a Cluster, a default store over a ledger written in one shard says so; over a new one it says nothing', async () => {
  const client = cluster.client()
  const old = uniquePrefix('one-shard')
  await new RedisLedgerStore({ client, prefix: old, shards: 1, logger: false }).write(
    {
      id: accountKey('acct', 'p1'),
      account: 'acct',
      payloadId: 'p1',
      type: 'event.created',
      source: 'webhook',
      status: 'done',
      attempts: 1,
      receivedAt: Date.now(),
      updatedAt: Date.now(),
    },
    undefined,
  )
  const told = await new Promise<string>((resolve) => {
    // (It may also warn of the cluster's persistence: that is not this.)
    const warn = (m: string) => m.includes('one shard') && resolve(m)
    new RedisLedgerStore({ client, prefix: old, logger: { warn } })
  })
  expect(told).toMatch(/written in one shard; it is now read in 64/)
  const warned: string[] = []
  const fresh = uniquePrefix('fresh')
  new RedisLedgerStore({ client, prefix: fresh, logger: { warn: (m) => warned.push(m) } })
  // The store's check went first on the connection to that key's node: answered before this.
  await client.exists(`${fresh}ledger:{${fresh}}:by-time`)
  expect(warned.filter((m) => m.includes('one shard'))).toEqual([])
})

/**
 * `count` deliveries, each to an account of `accounts` (or, `lookup`, each to a webhook of that
 * many, signed with its own secret as a lookup gives it), sent through the instances.
 */
async function deliverMany(
  apps: Instance[],
  prefix: string,
  count: number,
  accounts: number,
  lookup = false,
) {
  const statuses = await Promise.all(
    Array.from({ length: count }, (_, n) => {
      const webhookId = `wh_acct-${n % accounts}`
      const secret = lookup ? `${SECRET}:${webhookId}` : SECRET
      return post(apps[n % apps.length]!.port, envelope(n, prefix), webhookId, secret)
    }),
  )
  expect(statuses.filter((s) => s !== 200)).toEqual([])
}

it('a many-account load on 3 masters: the busiest serves at most 40% of the commands (one shard: 100%)', async () => {
  const env = { CLUSTER_NODES: cluster.nodes.join(','), RUNS: 'stdout', ACCOUNTS: '1' }
  const shares: Record<string, number> = {}
  for (const shards of ['', '1']) {
    const prefix = uniquePrefix(`spread-${shards || 'default'}`)
    const apps = await Promise.all(
      Array.from({ length: 3 }, () =>
        instance({ ...env, PREFIX: prefix, LEASE_MS: '30000', HOLD_MS: '0', SHARDS: shards }),
      ),
    )
    await onEachMaster((client) => client.config('RESETSTAT'))
    await deliverMany(apps, prefix, 1_500, 500)
    const calls = await commandsPerMaster()
    const total = calls.reduce((a, b) => a + b, 0)
    expect(total).toBeGreaterThan(1_500 * 3)
    shares[shards || 'default'] = Math.max(...calls) / total
    stopInstances()
  }
  expect(shares.default).toBeLessThanOrEqual(0.4)
  expect(shares['1']).toBeGreaterThan(0.95)
}, 120_000)

it('a secret lookup (deliveries of no account) on 3 masters: 300 webhooks x 2 deliveries spread by webhook, the busiest at most 40%; each delivery ran once', async () => {
  const prefix = uniquePrefix('spread-lookup')
  const env = { CLUSTER_NODES: cluster.nodes.join(','), RUNS: 'stdout', LOOKUP: '1' }
  const apps = await Promise.all(
    Array.from({ length: 3 }, () =>
      instance({ ...env, PREFIX: prefix, LEASE_MS: '30000', HOLD_MS: '0' }),
    ),
  )
  await onEachMaster((client) => client.config('RESETSTAT'))
  await deliverMany(apps, prefix, 600, 300, true)
  const calls = await commandsPerMaster()
  const total = calls.reduce((a, b) => a + b, 0)
  expect(total).toBeGreaterThan(600 * 3)
  expect(Math.max(...calls) / total).toBeLessThanOrEqual(0.4)
  // The service's retries of 60 of them, to another instance: claimed in their webhook's shard.
  const again = await Promise.all(
    Array.from({ length: 60 }, (_, n) => {
      const webhookId = `wh_acct-${n % 300}`
      return post(apps[(n + 1) % 3]!.port, envelope(n, prefix), webhookId, `${SECRET}:${webhookId}`)
    }),
  )
  expect(again.filter((s) => s !== 200)).toEqual([])
  await expect.poll(() => apps.flatMap((app) => app.runs).length).toBe(600)
  expect(new Set(apps.flatMap((app) => app.runs)).size).toBe(600)
}, 120_000)

it('slots migrated (redis-cli --cluster reshard) while 3 instances take deliveries sent to 2 of them at once: every delivery runs once, every entry done', async () => {
  const prefix = uniquePrefix('reshard')
  const env = {
    CLUSTER_NODES: cluster.nodes.join(','),
    RUNS: 'stdout',
    ACCOUNTS: '1',
    PREFIX: prefix,
    LEASE_MS: '5000',
    HOLD_MS: '2',
  }
  const apps = await Promise.all(Array.from({ length: 3 }, () => instance(env)))
  const [from, to] = await cluster.masters()
  const before = await slotsOf(from!)
  const idOf = async (address: string) => {
    const client = node(address)
    try {
      return String(await client.cluster('MYID'))
    } finally {
      client.disconnect()
    }
  }
  // The first master's slots hold 21 or 22 of the 64 shards: a third of them moves to the next.
  const reshard = spawn(
    process.env.REDIS_CLI ?? 'redis-cli',
    [
      '--cluster',
      'reshard',
      from!,
      '--cluster-from',
      await idOf(from!),
      '--cluster-to',
      await idOf(to!),
      '--cluster-slots',
      '2000',
      '--cluster-yes',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  reshard.stderr.on('data', (d) => (stderr += d))
  const resharded = new Promise<number | null>((resolve) => reshard.on('exit', resolve))
  let moving = true
  void resharded.then(() => (moving = false))
  // Rounds of 20 new deliveries, each posted to two instances at once, for as long as slots
  // move (and at least 10 rounds); a delivery neither answered 200 is retried, as the service
  // retries, until one does.
  const sent: { body: string; webhook: string; done: boolean }[] = []
  const send = async (d: (typeof sent)[number], twice: boolean) => {
    const pick = () => apps[Math.floor(Math.random() * apps.length)]!.port
    const answers = await Promise.all(
      (twice ? [pick(), pick()] : [pick()]).map((port) => post(port, d.body, d.webhook)),
    )
    if (answers.includes(200)) d.done = true
  }
  for (let round = 0; moving || round < 10; round++) {
    const batch = Array.from({ length: 20 }, (_, i) => {
      const n = sent.length + i
      return { body: envelope(n, prefix), webhook: `wh_acct-${n % 300}`, done: false }
    })
    sent.push(...batch)
    await Promise.all(batch.map((d) => send(d, true)))
  }
  expect(await resharded, stderr).toBe(0)
  for (let pass = 0; pass < 50 && sent.some((d) => !d.done); pass++) {
    await new Promise((r) => setTimeout(r, 200))
    await Promise.all(sent.filter((d) => !d.done).map((d) => send(d, false)))
  }
  expect(sent.filter((d) => !d.done).length, 'deliveries never answered 200').toBe(0)
  const runs = apps.flatMap((app) => app.runs)
  const once = new Set(runs)
  expect(runs.length - once.size, 'deliveries run twice').toBe(0)
  expect(once.size, 'deliveries run').toBe(sent.length)
  const store = new RedisLedgerStore({ client: cluster.client(), prefix, logger: false })
  const statuses = await Promise.all(
    sent.map(async ({ body, webhook }) => {
      const { id } = JSON.parse(body) as { id: string }
      return (await store.get(accountKey(webhook.slice(3), id)))?.status
    }),
  )
  expect(statuses.filter((s) => s !== 'done')).toEqual([])
  expect(await slotsOf(from!), 'the slots moved').toBe(before - 2_000)
}, 240_000)
