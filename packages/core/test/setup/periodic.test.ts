import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createScheduling, type Scheduling } from '../../src/setup/scheduling.js'
import { memoryStores } from '../../src/setup/stores.js'
import { MemorySweepStore } from '../../src/sweep/store.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

// The periodic work called as a cron calls it, at every cadence the docs promise (10 s, 1 min,
// 5 min, 15 min), over real HTTP against the fake service on a driven clock: tokens refreshed
// before expiry and none on the request path, every disabled webhook repaired within the
// sweep's period plus one cadence, every account listed once a period (none skipped, none
// twice); and falling behind told by the report, one warning and `health()`.

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE
const SWEEP_PERIOD = 2 * HOUR
const ACCOUNTS = 48

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
  server.setExpiresIn(7_200) // the service's 2-hour access tokens
})
afterEach(() => server.close())

interface World {
  clock: { now: number }
  keys: string[]
  scheduling: Scheduling
  warnings: string[]
}

/** `ACCOUNTS` connected accounts, each with its webhook, on one driven clock. */
async function world(): Promise<World> {
  const clock = { now: Date.UTC(2030, 0, 1) }
  const now = () => clock.now
  const tokens = new MemoryTokenStore()
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  for (const key of keys) {
    const granted = server.grant(key)
    await tokens.set(key, {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: clock.now + 2 * HOUR,
      obtainedAt: clock.now,
      account: { id: key },
    })
  }
  const warnings: string[] = []
  const scheduling = createScheduling({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    authUrl: server.url,
    apiUrl: `${server.url}/v1`,
    webhookUrl: 'https://app.example.test/webhooks/scheduling',
    stores: { ...memoryStores(), tokens, sweeps: new MemorySweepStore({ now }) },
    refreshAhead: true,
    sweep: { periodMs: SWEEP_PERIOD },
    now,
    logger: {
      debug() {},
      info() {},
      warn: (line: string) => void warnings.push(line),
      error: (line: string) => void warnings.push(line),
    },
  })
  for (const key of keys) await scheduling.subscriptions!.ensure(key)
  return { clock, keys, scheduling, warnings }
}

/** A small seeded draw, so each cadence's run is the same every time. */
function draws(seed: number) {
  let s = seed >>> 0
  return (n: number) => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s % n
  }
}

describe('runDue() at every cadence', () => {
  for (const [label, cadence] of [
    ['10 s', 10 * SECOND],
    ['1 min', MINUTE],
    ['5 min', 5 * MINUTE],
    ['15 min', 15 * MINUTE],
  ] as const) {
    it(`every ${label} for 8 hours: no refresh on the request path, each repair within the period plus one cadence, each account listed once a period`, async () => {
      const { clock, keys, scheduling, warnings } = await world()
      const draw = draws(cadence)
      const start = clock.now
      const duration = 4 * SWEEP_PERIOD
      const disabled = new Map<string, { account: string; at: number }>()
      const repairedAfter: number[] = []
      let requestPath = 0
      let reads = 0
      await scheduling.runDue() // the first call of a deploy: every shard starts now
      const listsAtStart = new Map(server.webhooks.listsByAccount)
      while (clock.now - start < duration) {
        // The app between two calls: every token read at the last moment before the next call.
        clock.now += cadence - 1
        const calls = server.tokenRequests.length
        for (const key of keys) await scheduling.tokens.getAccessToken(key)
        reads += keys.length
        requestPath += server.tokenRequests.length - calls
        // Now and then the service disables an account's webhook.
        if (draw(Math.max(1, Math.round((20 * MINUTE) / cadence))) === 0) {
          const key = keys[draw(keys.length)]!
          const active = server.webhooks.all(key).find((w) => w.state === 'active')
          if (active && !disabled.has(active.id) && clock.now - start < duration - SWEEP_PERIOD) {
            server.webhooks.setState(active.id, 'disabled')
            disabled.set(active.id, { account: key, at: clock.now })
          }
        }
        clock.now += 1
        const report = await scheduling.runDue()
        expect(report.behindMs).toBe(0)
        for (const [id, { account, at }] of disabled) {
          if (server.webhooks.all(account).some((w) => w.state === 'active' && w.id !== id)) {
            repairedAfter.push(clock.now - at)
            disabled.delete(id)
          }
        }
      }
      expect(reads).toBeGreaterThan(0)
      expect(requestPath, 'token calls on the request path').toBe(0)
      expect(disabled.size, 'webhooks never repaired').toBe(0)
      expect(repairedAfter.length).toBeGreaterThan(0)
      for (const ms of repairedAfter) expect(ms).toBeLessThanOrEqual(SWEEP_PERIOD + cadence)
      // Every account listed once in each of the four periods: none skipped, none twice.
      for (const key of keys) {
        const lists = (server.webhooks.listsByAccount.get(key) ?? 0) - (listsAtStart.get(key) ?? 0)
        expect(lists, key).toBe(4)
      }
      expect(warnings).toEqual([])
      expect((await scheduling.health()).ok).toBe(true)
    })
  }

  it('a budget too small for the backlog: behind in the report, one warning saying by how much and what to change, health() failing; the next calls take up where it ended', async () => {
    const { clock, scheduling, warnings } = await world()
    await scheduling.runDue()
    clock.now += 3 * HOUR // a cron that stopped for three hours
    // A budget of 0: each task steps once, whatever the machine's speed.
    const first = await scheduling.runDue({ budgetMs: 0 })
    expect(first.behindMs).toBeGreaterThan(0)
    expect(first.tasks.refreshAhead!.steps).toBe(1)
    expect(first.tasks.sweep!.steps).toBe(1)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(
      /periodic work is \d+ (min|h) behind after runDue\(\) \(refreshAhead .+, sweep .+\), within its budget of 0 ms\. Call runDue\(\) more often, or give it a larger budgetMs/,
    )
    const unhealthy = await scheduling.health()
    expect(unhealthy.ok).toBe(false)
    expect(unhealthy.checks.find((c) => c.name === 'periodic.sweep')?.detail).toMatch(
      /behind \(more than 20 min\): call runDue\(\) more often/,
    )
    // Still behind: told once, not at every call.
    const second = await scheduling.runDue({ budgetMs: 0 })
    expect(second.behindMs).toBeGreaterThan(0)
    expect(second.behindMs).toBeLessThan(first.behindMs)
    expect(warnings).toHaveLength(1)
    // A call with the default budget takes up where they ended and catches up.
    const third = await scheduling.runDue()
    expect(third.behindMs).toBe(0)
    expect(third.tasks.refreshAhead!.steps).toBeGreaterThan(1)
    expect((await scheduling.health()).ok).toBe(true)
    // Behind again later: told again.
    clock.now += 3 * HOUR
    await scheduling.runDue({ budgetMs: 0 })
    expect(warnings).toHaveLength(2)
  })

  it('refuses a budget that is not a whole number of ms, naming the option', async () => {
    const { scheduling } = await world()
    await expect(scheduling.runDue({ budgetMs: -1 })).rejects.toThrow(/budgetMs/)
    await expect(scheduling.runDue({ budgetMs: Number.NaN })).rejects.toThrow(/budgetMs/)
  })
})
