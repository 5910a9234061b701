import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOAuthClient } from '../../src/oauth/client.js'
import { slotOf } from '../../src/sweep/schedule.js'
import { MemorySweepStore } from '../../src/sweep/store.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { RefreshAhead } from '../../src/tokens/refresh-ahead.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

// Refresh ahead over real HTTP against the fake token server, on a driven clock: every
// connection refreshed once a period at its own time, never on the request path, once in all
// when two instances step at once; and the load of accounts connected in the same minute
// spread flat over the period.

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const PERIOD = 100 * MINUTE
const ACCOUNTS = 200

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
  server.setExpiresIn(7_200) // the service's 2-hour access tokens
})
afterEach(() => server.close())

/** Accounts connected at the start, their token store counting each key's writes. */
async function world() {
  const clock = { now: Date.UTC(2030, 0, 1) }
  const store = new MemoryTokenStore()
  const writes = new Map<string, number>()
  const set = store.set.bind(store)
  store.set = async (key, record) => {
    writes.set(key, (writes.get(key) ?? 0) + 1)
    return await set(key, record)
  }
  const cas = store.compareAndSet.bind(store)
  store.compareAndSet = async (key, record, expected) => {
    const done = await cas(key, record, expected)
    if (done) writes.set(key, (writes.get(key) ?? 0) + 1)
    return done
  }
  const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
  for (const key of keys) {
    const granted = server.grant(key)
    await set(key, {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: clock.now + 2 * HOUR,
      obtainedAt: clock.now,
      account: { id: key },
    })
  }
  const oauth = createOAuthClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    authUrl: server.url,
    now: () => clock.now,
  })
  const sweeps = new MemorySweepStore({ now: () => clock.now })
  const instance = () => {
    const tokens = createTokenManager({
      oauth,
      store,
      now: () => clock.now,
      lease: { pollMs: 2 },
      retry: { baseDelayMs: 2, maxDelayMs: 5 },
    })
    const ahead = new RefreshAhead(tokens, {
      keys: async function* () {
        yield* keys
      },
      store: sweeps,
      now: () => clock.now,
    })
    return { tokens, ahead }
  }
  return { clock, keys, writes, instance }
}

describe('RefreshAhead', () => {
  it('two periods in steps of 1%, two instances at once, the app reading tokens all along: the turn of each connection taken once a period (one token call), none on the request path', async () => {
    const { clock, keys, writes, instance } = await world()
    const a = instance()
    const b = instance()
    await Promise.all([a.ahead.step(), b.ahead.step()])
    let refreshed = 0
    let fresh = 0
    const tokenCalls = () => server.tokenRequests.length
    const before = tokenCalls()
    for (let step = 1; step <= 200; step++) {
      clock.now += PERIOD / 100
      const reports = await Promise.all([a.ahead.step(), b.ahead.step()])
      for (const r of reports) {
        refreshed += r.refreshed
        fresh += r.fresh
        expect(r.failed).toEqual([])
      }
      // The app's requests: each asks a token now and then, on either instance.
      const asked = tokenCalls()
      for (const key of keys.filter((_, i) => (i + step) % 17 === 0))
        await (step % 2 === 0 ? a : b).tokens.getAccessToken(key)
      expect(tokenCalls(), 'no refresh on the request path').toBe(asked)
    }
    // Each connection's turn came twice, and was taken once each time: refreshed, or left when
    // its tokens were obtained in the two steps before (connected just before its turn).
    expect(refreshed + fresh).toBe(2 * ACCOUNTS)
    expect(fresh).toBeLessThanOrEqual(ACCOUNTS * 0.03)
    expect(tokenCalls() - before).toBe(refreshed)
    expect(writes.size).toBe(ACCOUNTS)
    expect([...writes.values()].reduce((n, w) => n + w, 0)).toBe(refreshed)
  })

  it('the token endpoint failing at a turn: the connection is reported failed, not refreshed, and refreshed at the next step', async () => {
    const { clock, keys, instance } = await world()
    const { ahead } = instance()
    await ahead.step()
    // Past the turns of the first two steps (tokens just obtained are left), then step until a
    // turn comes, with the token endpoint down for its whole refresh.
    for (let step = 0; step < 3; step++) {
      clock.now += PERIOD / 100
      await ahead.step()
    }
    let report = await ahead.step()
    for (let step = 1; report.due === 0; step++) {
      clock.now += PERIOD / 100
      server.failNext(503, 503, 503, 503, 503, 503)
      report = await ahead.step()
    }
    expect(report.refreshed).toBe(0)
    expect(report.failed.length).toBe(report.due)
    expect(keys).toEqual(expect.arrayContaining(report.failed))
    server.clearFailures()
    clock.now += PERIOD / 100
    const next = await ahead.step()
    expect(next.refreshed).toBeGreaterThanOrEqual(report.failed.length)
    expect(next.failed).toEqual([])
  })

  it('100,000 accounts connected in the same minute: their refreshes over the next day spread flat, the busiest minute at most 1.25x the mean', () => {
    const perMinute = new Map<number, number>()
    const connectedAt = 0
    for (let i = 0; i < 100_000; i++) {
      // Each refreshed at its turn: its slot in the period, every period after it connected.
      const slot = slotOf(`acct_${i}`, PERIOD)
      for (let t = connectedAt + slot; t < 24 * HOUR; t += PERIOD) {
        const minute = Math.floor(t / MINUTE)
        perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1)
      }
    }
    const counts = [...perMinute.values()]
    const mean = counts.reduce((n, c) => n + c, 0) / (24 * 60)
    expect(Math.max(...counts) / mean).toBeLessThanOrEqual(1.25)
  })
})
