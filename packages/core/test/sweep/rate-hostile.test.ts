import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import {
  latestTurn,
  MAX_PAUSE_MS,
  type RateTurns,
  reserveTurn,
  throttleTurns,
} from '../../src/sweep/rate.js'
import { RateCap } from '../../src/sweep/rate-cap.js'
import type { RateCapStore } from '../../src/sweep/rate-store.js'

// A shared rate is state any instance (or anyone with the store's credentials) can write: what
// is read is checked, so one hostile write costs at most one bounded wait, and no value stops
// the cap or turns it off.

const limits = { ceiling: 20, floor: 0.2, raiseEveryMs: 10_000 }
const now = 1_900_000_000_000
const anyNumber = fc.oneof(
  fc.double(),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, 0, -1, now + 86_400_000, 2 ** 53),
)
const anyTurns = fc.record({
  perSecond: anyNumber,
  movedAt: anyNumber,
  pausedUntil: anyNumber,
  lastAt: fc.option(anyNumber, { nil: undefined }),
}) as fc.Arbitrary<RateTurns>

describe('a shared rate read back whatever was written', () => {
  it('property: a turn is never before now nor past the longest pause and a spacing; the rate stays within its limits', () => {
    fc.assert(
      fc.property(anyTurns, fc.option(anyNumber, { nil: undefined }), (turns, retry) => {
        const { turns: next, at } = reserveTurn(turns, limits, now)
        expect(at).toBeGreaterThanOrEqual(now)
        expect(at).toBeLessThanOrEqual(latestTurn(limits, now))
        expect(next.perSecond).toBeGreaterThanOrEqual(limits.floor)
        expect(next.perSecond).toBeLessThanOrEqual(limits.ceiling)
        const throttled = throttleTurns(turns, limits, now, retry)
        expect(throttled.pausedUntil).toBeLessThanOrEqual(now + MAX_PAUSE_MS)
        expect(Number.isFinite(throttled.perSecond)).toBe(true)
        expect(throttled.perSecond).toBeGreaterThanOrEqual(limits.floor)
        // The turn after a throttle is bounded too: the store never holds a wait past it.
        const after = reserveTurn(throttled, limits, now)
        expect(after.at).toBeLessThanOrEqual(latestTurn(limits, now))
      }),
    )
  })

  it("a store of one's own answering a turn a day ahead, NaN, or a rate of 0: one bounded wait at most, then the cap goes on; throttled(NaN) pauses nothing", async () => {
    const clock = { now }
    const waits: number[] = []
    const answers = [
      () => ({ at: clock.now + 86_400_000, perSecond: 0 }),
      () => ({ at: Number.NaN, perSecond: Number.NaN }),
      () => ({ at: clock.now + 50, perSecond: 20 }),
    ]
    const store: RateCapStore = {
      reserveTurn: async () => answers.shift()?.() ?? { at: clock.now, perSecond: 20 },
      throttleRate: async () => {},
    }
    const cap = new RateCap({
      perSecond: 20,
      floor: 0.2,
      store,
      now: () => clock.now,
      sleep: async (ms) => {
        waits.push(ms)
        clock.now += ms
      },
    })
    await cap.acquire()
    expect(waits[0]).toBeLessThanOrEqual(MAX_PAUSE_MS + 1_000 / 0.2)
    expect(cap.perSecond).toBe(20) // a rate of 0 is not taken
    await cap.acquire() // NaN: no wait
    await cap.acquire()
    expect(waits.slice(1)).toEqual([50])
    await cap.throttled(Number.NaN)
    expect(cap.perSecond).toBe(10)
  })

  it("a client's timeoutMs covers the wait for a turn: a pause of five minutes ends in a TimeoutError at the time-out, not after the pause", async () => {
    const api = createServer((_req, res) => res.writeHead(200).end('{}'))
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
    try {
      const paused: RateCapStore = {
        reserveTurn: async () => ({ at: Date.now() + MAX_PAUSE_MS, perSecond: 20 }),
        throttleRate: async () => {},
      }
      const cap = new RateCap({ perSecond: 20, store: paused })
      const client = createSchedulingClient({
        baseUrl: `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1`,
        token: 'pat_live_1',
        fetch: cap.wrap((input, init) => fetch(input, init)),
        timeoutMs: 50,
        retry: { attempts: 1 },
      })
      await expect(client.me()).rejects.toMatchObject({ code: 'timeout' })
    } finally {
      api.close()
    }
  }, 20_000)
})
