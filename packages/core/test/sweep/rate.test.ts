import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_PAUSE_MS,
  nextSlot,
  type RateLimits,
  raised,
  startRate,
  throttled,
} from '../../src/sweep/rate.js'
import { RateCap } from '../../src/sweep/rate-cap.js'

// The rate plan by properties (never past its ceiling nor under its floor, halved by a 429,
// raised back by time) and its executor on a driven clock: requests spaced by the rate, a 429
// answered through `wrap` lowering it, a `Retry-After` pausing it, at most five minutes.

const limits: RateLimits = { ceiling: 10, floor: 0.1, raiseEveryMs: 10_000 }

describe('rate plan', () => {
  it('property: any run of 429s and time keeps the rate within floor and ceiling; a 429 halves it; quiet time brings it back to the ceiling', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ wait: fc.integer({ min: 0, max: 60_000 }), limited: fc.boolean() }), {
          maxLength: 60,
        }),
        (events) => {
          let now = 0
          let state = startRate(limits, now)
          for (const { wait, limited } of events) {
            now += wait
            state = raised(state, limits, now)
            if (limited) {
              const before = state.perSecond
              state = throttled(state, limits, now)
              expect(state.perSecond).toBe(Math.max(limits.floor, before / 2))
            }
            expect(state.perSecond).toBeGreaterThanOrEqual(limits.floor)
            expect(state.perSecond).toBeLessThanOrEqual(limits.ceiling)
            const next = nextSlot(state, now - 1, now)
            expect(next).toBeGreaterThanOrEqual(now - 1 + 1_000 / state.perSecond)
          }
          expect(raised(state, limits, now + 10 * limits.raiseEveryMs).perSecond).toBe(
            limits.ceiling,
          )
        },
      ),
    )
  })

  it('a Retry-After pauses the rate, never past five minutes', () => {
    const state = throttled(startRate(limits, 0), limits, 1_000, 86_400_000)
    expect(state.pausedUntil).toBe(1_000 + MAX_PAUSE_MS)
    expect(nextSlot(state, undefined, 2_000)).toBe(1_000 + MAX_PAUSE_MS)
  })
})

describe('RateCap', () => {
  /** A driven clock whose sleeps move it. */
  const driven = () => {
    const clock = { now: 0 }
    return {
      clock,
      now: () => clock.now,
      sleep: async (ms: number) => {
        clock.now += ms
      },
    }
  }

  it('spaces requests by the rate: 100 at 10 a second take 9.9 s of the clock', async () => {
    const { clock, now, sleep } = driven()
    const cap = new RateCap({ perSecond: 10, now, sleep })
    for (let i = 0; i < 100; i++) await cap.acquire()
    expect(clock.now).toBe(9_900)
    expect(cap.counters.requests).toBe(100)
  })

  it('a 429 through wrap halves the rate and its Retry-After pauses it; time raises it again', async () => {
    const { clock, now, sleep } = driven()
    const cap = new RateCap({ perSecond: 8, now, sleep, raiseEveryMs: 1_000 })
    let answer = 429
    const fetch = cap.wrap(async () =>
      answer === 429
        ? new Response('{}', { status: 429, headers: { 'retry-after': '3' } })
        : new Response('{}'),
    )
    expect((await fetch('http://x/')).status).toBe(429)
    expect(cap.perSecond).toBe(4)
    answer = 200
    const before = clock.now
    await fetch('http://x/')
    expect(clock.now - before).toBe(3_000)
    expect(cap.counters).toEqual({ requests: 2, throttled: 1 })
    clock.now += 10_000
    expect(cap.perSecond).toBe(8)
  })

  it('refuses a rate that is no rate', () => {
    for (const perSecond of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5'])
      expect(() => new RateCap({ perSecond: perSecond as number })).toThrow(/perSecond/)
    expect(() => new RateCap({ perSecond: 1, floor: 2 })).toThrow(/floor/)
  })
})
