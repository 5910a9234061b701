import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  MAX_PAUSE_MS,
  nextSlot,
  type RateLimits,
  raised,
  reserveTurn,
  startRate,
  throttled,
  throttleTurns,
} from '../../src/sweep/rate.js'
import { RateCap } from '../../src/sweep/rate-cap.js'
import type { RateCapStore } from '../../src/sweep/rate-store.js'
import { MemorySweepStore } from '../../src/sweep/store.js'

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

  it('property: turns reserved over any run of 429s and time never come sooner than the rate allows after the last, nor before asked, nor in a pause', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            wait: fc.integer({ min: 0, max: 5_000 }),
            limited: fc.boolean(),
            retryAfter: fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined }),
          }),
          { maxLength: 80 },
        ),
        (events) => {
          let now = 0
          let turns: ReturnType<typeof reserveTurn>['turns'] | undefined
          let last: number | undefined
          for (const { wait, limited, retryAfter } of events) {
            now += wait
            if (limited) {
              turns = throttleTurns(turns, limits, now, retryAfter)
              expect(turns.lastAt).toBe(last)
              continue
            }
            const paused = turns?.pausedUntil ?? now
            const reserved = reserveTurn(turns, limits, now)
            turns = reserved.turns
            expect(reserved.at).toBeGreaterThanOrEqual(now)
            expect(reserved.at).toBeGreaterThanOrEqual(paused)
            if (last !== undefined)
              expect(reserved.at).toBeGreaterThanOrEqual(last + 1_000 / turns.perSecond)
            expect(turns.lastAt).toBe(reserved.at)
            last = reserved.at
          }
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

  it('two caps over one store keep one rate: 100 turns between them take 9.9 s of the clock, and a 429 seen by one spaces the other', async () => {
    const { clock, now, sleep } = driven()
    const store = new MemorySweepStore({ now })
    const a = new RateCap({ perSecond: 10, now, sleep, store })
    const b = new RateCap({ perSecond: 10, now, sleep, store })
    for (let i = 0; i < 50; i++) {
      await a.acquire()
      await b.acquire()
    }
    expect(clock.now).toBe(9_900)
    // Apart, each would have taken its own 50 turns in 4.9 s of the clock.
    const apart = driven()
    const c = new RateCap({ perSecond: 10, now: apart.now, sleep: apart.sleep })
    const d = new RateCap({ perSecond: 10, now: apart.now, sleep: apart.sleep })
    for (let i = 0; i < 50; i++) {
      await c.acquire()
      await d.acquire()
    }
    expect(apart.clock.now).toBe(4_900)

    await a.throttled()
    const before = clock.now
    await b.acquire()
    await b.acquire()
    // b's turns spaced at 5 a second from a's 429, though b saw none (at 10, 200 ms).
    expect(clock.now - before).toBe(200 + 200)
    expect(b.perSecond).toBe(5)
  })

  it('a store failing: acquire rejects (no request goes unseen), a 429 is still taken here', async () => {
    const failing: RateCapStore = {
      reserveTurn: async () => {
        throw new Error('store down')
      },
      throttleRate: async () => {
        throw new Error('store down')
      },
    }
    const cap = new RateCap({ perSecond: 8, store: failing })
    await expect(cap.acquire()).rejects.toThrow('store down')
    await expect(cap.throttled()).resolves.toBeUndefined()
    expect(cap.perSecond).toBe(4)
    expect(() => new RateCap({ perSecond: 1, store: {} as RateCapStore })).toThrow(/store/)
    expect(() => new RateCap({ perSecond: 1, name: '' })).toThrow(/name/)
  })
})
