import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOAuthClient } from '../../src/oauth/client.js'
import { RateCap } from '../../src/sweep/rate-cap.js'
import { lastTurn, slotOf } from '../../src/sweep/schedule.js'
import { MemorySweepStore } from '../../src/sweep/store.js'
import type { ConnectionChange } from '../../src/tokens/connection.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { RefreshAhead, type RefreshAheadOptions } from '../../src/tokens/refresh-ahead.js'
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
  const changes: ConnectionChange[] = []
  const instance = (more: Partial<RefreshAheadOptions> = {}) => {
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
      onConnectionChange: (change) => changes.push(change),
      ...more,
    })
    return { tokens, ahead }
  }
  return { clock, keys, writes, instance, changes, store, sweeps }
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

  it('maxStepMs a quarter of the period, stepped every quarter: each step catches up (behind 0), each connection refreshed once a period; more than a quarter is refused', async () => {
    const { clock, keys, instance } = await world()
    const a = instance({ maxStepMs: PERIOD / 4 })
    await a.ahead.step()
    let refreshed = 0
    let fresh = 0
    for (let step = 1; step <= 8; step++) {
      clock.now += PERIOD / 4
      const report = await a.ahead.step()
      expect(report.behindMs).toBe(0)
      expect(report.failed).toEqual([])
      refreshed += report.refreshed
      fresh += report.fresh
    }
    // Two periods: each turn taken once, refreshed unless its tokens were obtained within two
    // steps of it (the first turns after connecting).
    expect(refreshed + fresh).toBe(2 * keys.length)
    expect(refreshed).toBeGreaterThanOrEqual(keys.length)
    const { tokens } = instance()
    const store = new MemorySweepStore()
    const keysOf = async function* () {}
    expect(
      () => new RefreshAhead(tokens, { keys: keysOf, store, everyMs: 1000, maxStepMs: 251 }),
    ).toThrow(/maxStepMs must be at most a quarter of everyMs \(250 ms\)/)
    expect(
      () => new RefreshAhead(tokens, { keys: keysOf, store, everyMs: 1000, maxStepMs: 250 }),
    ).not.toThrow()
  })

  it('the token endpoint failing at a turn: the connection is reported failed (told once, refresh_failing), held for a twentieth of the period, tried then with one token call, and refreshed once the endpoint answers (told refresh_recovered)', async () => {
    const { clock, keys, instance, changes } = await world()
    const { ahead } = instance()
    await ahead.step()
    // Past the turns of the first two steps (tokens just obtained are left), then step until a
    // turn comes, with the token endpoint down.
    for (let step = 0; step < 3; step++) {
      clock.now += PERIOD / 100
      await ahead.step()
    }
    server.setDown(503)
    let report = await ahead.step()
    while (report.due === 0) {
      clock.now += PERIOD / 100
      report = await ahead.step()
    }
    const failedAt = clock.now
    expect(report.refreshed).toBe(0)
    expect(report.failed.length).toBe(report.due)
    expect(keys).toEqual(expect.arrayContaining(report.failed))
    const failing = changes.filter((c) => c.type === 'refresh_failing')
    expect(failing.map((c) => c.key).sort()).toEqual([...report.failed].sort())
    expect(
      failing.every((c) => c.type === 'refresh_failing' && !/token|secret/i.test(c.error)),
    ).toBe(true)
    // Until a twentieth of the period has passed, the failed ones are not tried again.
    const held = new Set(report.failed)
    let calls = server.tokenRequests.length
    const triedEarly: string[] = []
    const everFailed = new Set(report.failed)
    while (clock.now + PERIOD / 100 < failedAt + PERIOD / 20) {
      clock.now += PERIOD / 100
      const r = await ahead.step()
      triedEarly.push(...r.failed.filter((k) => held.has(k)))
      for (const k of r.failed) everFailed.add(k)
    }
    expect(triedEarly).toEqual([])
    // Then tried, down still: one token call each (no retry inside the try), failed, not told again.
    clock.now = failedAt + PERIOD / 20
    calls = server.tokenRequests.length
    const again = await ahead.step()
    expect(again.failed).toEqual(expect.arrayContaining(report.failed))
    expect(server.tokenRequests.length - calls).toBe(again.failed.length)
    for (const k of again.failed) everFailed.add(k)
    // Told once each: at its first failure, whatever the steps since.
    expect(
      changes
        .filter((c) => c.type === 'refresh_failing')
        .map((c) => c.key)
        .sort(),
    ).toEqual([...everFailed].sort())
    expect(changes.filter((c) => c.type === 'refresh_recovered')).toEqual([])
    // Up again: the next tries (0.6 of the period after the second failure) refresh them.
    server.setDown(undefined)
    clock.now = failedAt + PERIOD / 20 + 0.6 * PERIOD
    const next = await ahead.step()
    expect(next.refreshed).toBeGreaterThanOrEqual(report.failed.length)
    expect(next.failed).toEqual([])
    const recovered = changes.filter((c) => c.type === 'refresh_recovered').map((c) => c.key)
    expect(recovered.sort()).toEqual(expect.arrayContaining([...report.failed].sort()))
  })

  it('the token endpoint down for an hour, asking Retry-After of 10 minutes: at most 2 token calls a connection in that hour, the second one at least 10 minutes after the first; a second instance takes the held tries of a first one that is gone', async () => {
    const { clock, keys, instance, store, changes } = await world()
    const first = instance()
    await first.ahead.step()
    for (let step = 0; step < 3; step++) {
      clock.now += PERIOD / 100
      await first.ahead.step()
    }
    const owner = new Map<string, string>()
    for (const key of keys) owner.set((await store.get(key))!.refreshToken, key)
    server.setDown({
      status: 503,
      body: { error: 'temporarily_unavailable' },
      headers: { 'retry-after': '600' },
    })
    const start = clock.now
    const callsAt = new Map<string, number[]>()
    let seen = server.tokenRequests.length
    const note = () => {
      for (const r of server.tokenRequests.slice(seen)) {
        const key = owner.get(r.form.refresh_token!)!
        callsAt.set(key, [...(callsAt.get(key) ?? []), clock.now])
      }
      seen = server.tokenRequests.length
    }
    while (clock.now < start + HOUR) {
      clock.now += PERIOD / 100
      await first.ahead.step()
      note()
    }
    // Of 200 connections, those whose turn came in the hour (about 60%) were asked.
    expect(callsAt.size).toBeGreaterThan(ACCOUNTS / 3)
    for (const [key, at] of callsAt) {
      expect(at.length, key).toBeLessThanOrEqual(2)
      if (at.length === 2) expect(at[1]! - at[0]!, key).toBeGreaterThanOrEqual(10 * MINUTE)
    }
    // The first instance is gone; a second one takes the held tries when due, the endpoint up.
    server.setDown(undefined)
    const second = instance()
    const taken = new Set<string>()
    for (let step = 0; step < 100; step++) {
      clock.now += PERIOD / 100
      const r = await second.ahead.step()
      expect(r.failed).toEqual([])
    }
    for (const c of changes) if (c.type === 'refresh_recovered') taken.add(c.key)
    expect([...callsAt.keys()].filter((k) => !taken.has(k))).toEqual([])
    for (const key of keys)
      expect((await store.get(key))!.obtainedAt!, key).toBeGreaterThan(start + HOUR)
  })

  it('a step that dies after its refreshes, before its checkpoint: the next holder, long after, leaves each of those connections as it was refreshed (one token call each)', async () => {
    const { clock, instance } = await world()
    const { tokens } = instance()
    const sweeps = new MemorySweepStore({ now: () => clock.now })
    const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
    const options = {
      keys: async function* () {
        yield* keys
      },
      now: () => clock.now,
      leaseTtlMs: 5 * MINUTE,
    }
    const next = new RefreshAhead(tokens, { ...options, store: sweeps })
    // One that dies right after its refreshes: its checkpoints never move, its leases stay.
    const dying = new RefreshAhead(tokens, {
      ...options,
      store: {
        acquireLease: (name, owner, ttlMs) => sweeps.acquireLease(name, owner, ttlMs),
        releaseLease: async () => {},
        checkpoint: (name) => sweeps.checkpoint(name),
        setCheckpoint: async () => undefined,
      },
    })
    await next.step()
    // Stepped until acct_0's turn comes in the next step (past the first steps' grace).
    const slot = slotOf('acct_0', PERIOD)
    const step = PERIOD / 100
    clock.now += 3 * step
    await next.step()
    while (lastTurn(slot, PERIOD, clock.now + step) <= clock.now) {
      clock.now += step
      await next.step()
    }
    clock.now += step
    const died = await dying.step()
    expect(died.refreshed).toBeGreaterThan(0)
    const calls = server.tokenRequests.length
    clock.now += 6 * MINUTE // past the dead step's leases
    const redo = await next.step()
    expect(redo.failed).toEqual([])
    // Its window done again: what it refreshed is left; only later turns cost a token call.
    expect(redo.fresh).toBeGreaterThanOrEqual(died.refreshed)
    expect(server.tokenRequests.length - calls).toBe(redo.refreshed)
    expect(redo.refreshed + redo.fresh).toBe(redo.due)
  })

  it('under a rate cap of 2 a second: a step of many turns takes its token calls half a second apart on the clock', async () => {
    const { clock, instance } = await world()
    const { tokens } = instance()
    const keys = Array.from({ length: ACCOUNTS }, (_, i) => `acct_${i}`)
    const rateCap = new RateCap({
      perSecond: 2,
      now: () => clock.now,
      sleep: async (ms) => {
        clock.now += ms
      },
    })
    const ahead = new RefreshAhead(tokens, {
      keys: async function* () {
        yield* keys
      },
      store: new MemorySweepStore({ now: () => clock.now }),
      now: () => clock.now,
      rateCap,
      concurrency: 1,
    })
    await ahead.step()
    // Stepped until a step has several turns to refresh (past the first steps' grace).
    clock.now += 3 * (PERIOD / 100)
    await ahead.step()
    let before = clock.now
    let report = { refreshed: 0 }
    for (let step = 0; step < 50 && report.refreshed < 3; step++) {
      clock.now += PERIOD / 100
      before = clock.now
      report = await ahead.step()
    }
    expect(report.refreshed).toBeGreaterThanOrEqual(3)
    // The first call of a step may go at once; each next one waits half a second.
    expect(clock.now - before).toBeGreaterThanOrEqual((report.refreshed - 1) * 500)
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
