import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { WebhookSubscriptionsOptions } from '../../src/subscriptions/options.js'
import type { SweepReport } from '../../src/subscriptions/reports.js'
import { MemorySubscriptionStore, type SubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { RateCap } from '../../src/sweep/rate-cap.js'
import { dueIn, slotOf } from '../../src/sweep/schedule.js'
import { MemorySweepStore } from '../../src/sweep/store.js'

// Sweeps by suspicion over real HTTP against the fake service, on a driven clock: every account
// has its turn once a period, spread over it; an account that delivered within `healthyWithin`
// is passed over; every disabled or missing webhook is repaired within the period; two instances
// share the shards (no account checked twice, none skipped); a step that dies halfway is done
// again by the next holder of its shards once their leases lapse.

const DAY = 86_400_000
const ACCOUNTS = 600
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

let server: TokenServer
let tokens: Map<string, string>
beforeEach(async () => {
  server = await startTokenServer()
  tokens = new Map()
})
afterEach(() => server.close())

/** A world of `ACCOUNTS` connected accounts, each with its webhook, on one clock. */
async function world() {
  const clock = { now: Date.UTC(2030, 0, 1) }
  const store = new MemorySubscriptionStore()
  const sweepStore = new MemorySweepStore({ now: () => clock.now })
  const delivered = new Map<string, number>()
  const instance = (more: Partial<WebhookSubscriptionsOptions> = {}) =>
    createWebhookSubscriptions({
      url: 'https://app.example.test/webhooks/scheduling',
      tokens: { getAccessToken: async (key: string) => tokens.get(key)! },
      apiUrl: `${server.url}/v1`,
      store,
      retry: { baseDelayMs: 2, maxDelayMs: 2 },
      logger: quiet,
      now: () => clock.now,
      concurrency: 8,
      sweep: {
        store: sweepStore,
        periodMs: DAY,
        lastDelivery: async (key) => delivered.get(key),
      },
      ...more,
    })
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  const setup = instance()
  for (const key of keys) {
    tokens.set(key, server.grant(key).access_token)
    await setup.ensure(key)
  }
  return { clock, keys, delivered, instance, sweepStore, store }
}

/** The keys each report checked at the service. */
const checked = (reports: SweepReport[]) => reports.flatMap((r) => r.accounts.map((a) => a.key))

describe('sweep', () => {
  it('a day in steps of 1%: each quiet account listed once, the healthy never; a webhook that breaks is repaired within the period (an active one once it stops delivering); no step checks more than 3% of the accounts (1% on average)', async () => {
    const { clock, keys, delivered, instance, sweepStore } = await world()
    const subs = instance({
      sweep: {
        store: sweepStore,
        periodMs: DAY,
        healthyWithin: DAY / 4,
        lastDelivery: async (key) => delivered.get(key),
      },
    })
    const start = clock.now
    // A third of the accounts deliver all day long. At the start 30 webhooks break: those of
    // quiet accounts, and of active ones, which then deliver no more.
    const active = keys.filter((_, i) => i % 3 === 0)
    for (const key of active) delivered.set(key, clock.now)
    const broken = keys.filter((_, i) => i % 20 === 1)
    for (const [i, key] of broken.entries()) {
      const webhook = server.webhooks.all(key)[0]!
      if (i % 2 === 0) server.webhooks.setState(webhook.id, 'disabled')
      else server.webhooks.remove(webhook.id)
    }
    const delivering = active.filter((k) => !broken.includes(k))
    const repairedAt = new Map<string, number>()
    const first = await subs.sweep() // the first step starts the schedule now
    expect(first).toMatchObject({ shards: 16, due: 0, checked: 0 })
    const reports: SweepReport[] = []
    for (let step = 1; step <= 125; step++) {
      clock.now += DAY / 100
      for (const key of delivering) delivered.set(key, clock.now - 60_000)
      const report = await subs.sweep()
      for (const a of report.accounts)
        if (a.outcome === 'repaired' && !repairedAt.has(a.key)) repairedAt.set(a.key, clock.now)
      if (step <= 100) reports.push(report)
    }
    // The first day: every quiet account listed once; none of the delivering ones.
    const listed = checked(reports)
    const quietKeys = keys.filter((k) => !delivering.includes(k))
    const brokenActive = broken.filter((k) => active.includes(k))
    expect(new Set(listed).size).toBe(listed.length)
    expect(listed.filter((k) => delivering.includes(k))).toEqual([])
    expect(listed.length).toBeGreaterThanOrEqual(quietKeys.length - brokenActive.length)
    expect(Math.max(...reports.map((r) => r.checked))).toBeLessThanOrEqual(keys.length * 0.03)
    // Every broken webhook is repaired: a quiet account's within the day; an active one's
    // within healthyWithin + period of its last delivery (the start).
    for (const key of broken) {
      expect(
        server.webhooks.all(key).filter((w) => w.state === 'active'),
        key,
      ).toHaveLength(1)
      const bound = brokenActive.includes(key) ? DAY / 4 + DAY : DAY
      expect(repairedAt.get(key)! - start, key).toBeLessThanOrEqual(bound)
    }
    expect(reports.every((r) => r.behindMs === 0)).toBe(true)
  })

  it('two instances stepping at once share the shards: each account checked once in the day', async () => {
    const { clock, keys, instance } = await world()
    const a = instance()
    const b = instance()
    await Promise.all([a.sweep(), b.sweep()])
    const reports: SweepReport[] = []
    for (let step = 1; step <= 100; step++) {
      clock.now += DAY / 100
      reports.push(...(await Promise.all([a.sweep(), b.sweep()])))
    }
    const listed = checked(reports)
    expect(listed.length).toBe(keys.length)
    expect(new Set(listed).size).toBe(keys.length)
    // Both did some of the work: 16 shards, taken first come first served.
    expect(reports.filter((r) => r.shards > 0).length).toBeGreaterThan(100)
  })

  it('an instance dies halfway through a step: once its leases lapse, the next step does its windows again; the accounts listed twice are those it checked, under 2%; none skipped', async () => {
    const { clock, keys, instance, sweepStore } = await world()
    let calls = 0
    const byDying = new Set<string>()
    // The dying instance checks its first two accounts, then hangs for good (its leases are
    // renewed each 20 minutes of real time: never, in this test, as if the process were gone).
    const dying = instance({
      sweep: {
        store: sweepStore,
        periodMs: DAY,
        leaseTtlMs: 3_600_000,
        lastDelivery: async (key) => {
          if (++calls > 2) return await new Promise<number>(() => {})
          byDying.add(key)
          return undefined
        },
      },
    })
    const survivor = instance()
    await survivor.sweep()
    clock.now += DAY / 100
    const listedBefore = server.webhooks.counters.listed
    void dying.sweep()
    await waitFor(() => calls > 2 && server.webhooks.counters.listed >= listedBefore + 2)
    // Its shards are held: the survivor's step finds them busy, until their leases lapse.
    const blocked = await survivor.sweep()
    expect(blocked.busyShards).toBe(16)
    clock.now += 3_601_000
    const reports: SweepReport[] = []
    for (let step = 1; step <= 100; step++) {
      reports.push(await survivor.sweep())
      clock.now += DAY / 100
    }
    const listed = checked(reports)
    const twice = listed.filter((k) => byDying.has(k))
    expect(byDying.size).toBe(2)
    expect(twice.sort()).toEqual([...byDying].sort())
    expect(twice.length).toBeLessThanOrEqual(keys.length * 0.02)
    expect(new Set(listed).size).toBe(keys.length)
    expect(listed.length).toBe(keys.length)
  })
})

describe('sweep and account leases', () => {
  it('an account whose lease another instance holds (or a dead one left) is waited for, not passed over: its turn does not come again for a period', async () => {
    const { clock, keys, instance, store } = await world()
    const first = instance()
    await first.sweep()
    clock.now += DAY / 100
    const held = keys.find((k) => dueIn(slotOf(k, DAY), DAY, clock.now - DAY / 100, clock.now))!
    // The store refuses that account's lease until the test lets it go.
    let refused = 0
    let released = false
    const gated: SubscriptionStore = Object.assign(Object.create(store) as SubscriptionStore, {
      acquireLease: async (key: string, owner: string, ttlMs: number) => {
        if (key === held && !released) {
          refused++
          return false
        }
        return await store.acquireLease(key, owner, ttlMs)
      },
    })
    for (const name of [
      'get',
      'compareAndSet',
      'delete',
      'findByWebhook',
      'keys',
      'releaseLease',
    ] as const)
      Object.assign(gated, { [name]: (store[name] as (...a: unknown[]) => unknown).bind(store) })
    const step = instance({ store: gated }).sweep()
    await waitFor(() => refused >= 2)
    released = true
    const report = await step
    expect(report.accounts.find((a) => a.key === held)?.outcome).toBe('ok')
    expect(report.busy).toEqual([])
  })
})

describe('rateCap', () => {
  it("every API call of the subscriptions goes through the one cap; the service's 429 lowers it, and the call still succeeds", async () => {
    const { keys, instance } = await world()
    const rateCap = new RateCap({ perSecond: 1_000 })
    const subs = instance({ rateCap })
    server.webhooks.failApi({ status: 429, method: 'GET', count: 2 })
    const report = await subs.reconcile()
    expect(report.failed).toEqual([])
    expect(report.checked).toBe(keys.length)
    // Each account's list, and the two 429s answered before two of them went through.
    expect(rateCap.counters).toEqual({ requests: keys.length + 2, throttled: 2 })
    expect(rateCap.perSecond).toBeLessThan(1_000)
  })
})

/** Resolves once `check` holds, looking again each turn of the event loop. */
async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve))
}
