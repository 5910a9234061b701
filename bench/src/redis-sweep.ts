// What one sweep step costs Redis as accounts grow: the commands `RedisSubscriptionStore` is
// sent during one step of the real sweep (a hundredth of the period, what a step covers at the
// default `maxStepMs`; every account healthy, so the step's reads are the store's own), against
// the accounts that step found due. At 10,000, 100,000 and 1,000,000 accounts on one server, and
// at 10,000 and 100,000 on a Cluster of three masters; beside them the scan of before (what a
// step sends when the index's marker is gone: the heal after an upgrade, once a day), and a step
// that checks every account due (its lease, its record, the lease given back; the API call
// ends at once, the account not connected), at 10,000.
import { randomBytes } from 'node:crypto'
import { startCluster } from '@scheduling-kit/conformance/redis-cluster'
import {
  createWebhookSubscriptions,
  type Logger,
  MemorySweepStore,
  NotConnectedError,
  type SubscriptionRecord,
} from '@scheduling-kit/core'
import { RedisSubscriptionStore } from '@scheduling-kit/redis'
import { type Cluster, Redis } from 'ioredis'
import type { Target } from './harness.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const DAY = 86_400_000
/** BENCH_REDIS_SWEEP_MAX: the largest size on one server (default a million). */
const MAX = Number(process.env.BENCH_REDIS_SWEEP_MAX ?? 1_000_000)

type Client = Redis | Cluster

/** The client, counting each command sent through it. */
function counting<C extends Client>(real: C): { client: C; commands: () => number } {
  let commands = 0
  const client = new Proxy(real, {
    get(target, name, receiver) {
      if (name === 'sendCommand')
        return (...args: unknown[]) => {
          commands++
          return (target.sendCommand as (...a: unknown[]) => unknown)(...args)
        }
      return Reflect.get(target, name, receiver)
    },
  })
  return { client, commands: () => commands }
}

const record = (i: number): SubscriptionRecord => ({
  active: true,
  updatedAt: 0,
  webhooks: [{ id: `wh_${i}`, secret: `s_${i}`, url: 'https://app.example.test/h', createdAt: 0 }],
})

/** `count` accounts written through the store (each indexed as a live app writes it). */
async function fill(store: RedisSubscriptionStore, count: number): Promise<void> {
  const batch = 500
  for (let i = 0; i < count; i += batch)
    await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
        store.compareAndSet(`acct_${i + j}`, record(i + j), undefined),
      ),
    )
}

interface StepCost {
  accounts: number
  where: string
  due: number
  commands: number
  /** The same step with the index's marker gone (the scan), when measured. */
  scan?: number
}

/**
 * One sweep step's commands over `count` accounts on `real`, and the scan's when asked; with
 * `checked`, no account is healthy: each due one is checked.
 */
async function stepCost(
  real: Client,
  where: string,
  count: number,
  scan: boolean,
  checked = false,
) {
  const prefix = `sk-bench-sweep:${randomBytes(4).toString('hex')}:`
  await fill(new RedisSubscriptionStore({ client: real, prefix, logger: false }), count)
  const counted = counting(real)
  const clock = { now: Date.UTC(2030, 0, 1) }
  const subscriptions = createWebhookSubscriptions({
    url: 'https://app.example.test/h',
    tokens: {
      getAccessToken: async (key: string) => {
        throw new NotConnectedError(key)
      },
    },
    apiUrl: 'https://api.example.test/v1',
    store: new RedisSubscriptionStore({ client: counted.client, prefix, logger: false }),
    sweep: {
      store: new MemorySweepStore({ now: () => clock.now }),
      // Every account delivered a moment ago: healthy, passed over without a store read.
      lastDelivery: async () => (checked ? undefined : clock.now - 1_000),
    },
    now: () => clock.now,
    logger: quiet,
  })
  await subscriptions.sweep() // starts the schedule; lists nothing
  const step = async () => {
    clock.now += DAY / 100
    const before = counted.commands()
    const report = await subscriptions.sweep()
    return { due: report.due, commands: counted.commands() - before }
  }
  await step() // the first step after a fill indexes nothing new (the store wrote the index)
  const measured = await step()
  const cost: StepCost = { accounts: count, where, ...measured }
  if (scan) {
    await real.del(`${prefix}subscription-phase-index`)
    cost.scan = (await step()).commands
  }
  await drop(real, prefix)
  return cost
}

/** Deletes every key under `prefix` (on each master of a Cluster). */
async function drop(real: Client, prefix: string): Promise<void> {
  const nodes = 'nodes' in real ? real.nodes('master') : [real]
  for (const node of nodes) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 5_000)
      cursor = next
      for (let i = 0; i < keys.length; i += 500)
        await Promise.all(keys.slice(i, i + 500).map((k) => node.unlink(k)))
    } while (cursor !== '0')
  }
}

export async function redisSweepBench(): Promise<Target[]> {
  const costs: StepCost[] = []
  const redis = new Redis(REDIS_URL)
  try {
    for (const count of [10_000, 100_000, 1_000_000].filter((n) => n <= MAX))
      costs.push(await stepCost(redis, 'one server', count, count <= 100_000))
    costs.push(await stepCost(redis, 'one server, every account due checked', 10_000, false, true))
  } finally {
    redis.disconnect()
  }
  const cluster = await startCluster()
  const client = cluster.client()
  try {
    for (const count of [10_000, 100_000])
      costs.push(await stepCost(client, 'Cluster, 3 masters', count, false))
  } finally {
    await cluster.stop()
  }
  console.log(
    '\nRedisSubscriptionStore: commands one sweep step sends (a hundredth of the period; every account healthy)\n| accounts | where | due | commands | per account due | the scan of before |\n|---:|---|---:|---:|---:|---:|',
  )
  for (const c of costs)
    console.log(
      `| ${c.accounts.toLocaleString('en')} | ${c.where} | ${c.due} | ${c.commands} | ${(c.commands / c.due).toFixed(3)} | ${c.scan ?? ''} |`,
    )
  return costs
    .filter((c) => !c.where.includes('checked'))
    .map((c) => ({
      what: `Redis sweep step, ${c.accounts.toLocaleString('en')} accounts (${c.where}): commands / accounts due`,
      ratio: c.commands / c.due,
      limit: 1.5,
      kind: 'max' as const,
    }))
}
