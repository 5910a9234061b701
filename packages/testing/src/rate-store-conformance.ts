import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ConfigError, type RateCapStore, type RateLimits } from '@scheduling-kit/core'
import { latestTurn, type RateTurns, reserveTurn, throttleTurns } from '@scheduling-kit/core/store'
import type { StoreConformanceOptions } from './conformance-options.js'

// The battery a `RateCapStore` must pass: a rate never used starts at its ceiling; over any run
// of turns and 429s the store gives exactly the turns the plan computes (`reserveTurn`,
// `throttleTurns`); of many turns reserved at once each is its own, spaced by the rate; names
// are separate rates.

/** A seeded generator (mulberry32): the same run of turns and 429s each time. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** A field of a stored rate, as `corrupt` writes it. */
export type RateField = 'perSecond' | 'movedAt' | 'pausedUntil' | 'lastAt'

export interface RateCapStoreConformanceOptions extends StoreConformanceOptions {
  /**
   * Writes `value` straight into the stored rate `name` (as a hostile or broken instance
   * could), where the store keeps `field`; rejects when the store cannot hold such a value (a
   * typed column). With it, the battery checks that every number the store reads is checked.
   */
  corrupt?: (name: string, field: RateField, value: string) => Promise<void>
}

/** Values no rate's plan writes: not numbers, infinities, zero, far past and a day ahead. */
const HOSTILE = (now: number) => [
  'NaN',
  'Infinity',
  '-Infinity',
  '0',
  '-1',
  'not a number',
  String(-now),
  String(now + 86_400_000),
]

/**
 * Runs the rate store battery. `createStore` gives a store over private or empty rates: the
 * kit's rate names are drawn at random.
 *
 * @example
 * ```ts
 * runRateCapStoreConformance(() => new MyRateStore(db), { describe, it })
 * ```
 */
export function runRateCapStoreConformance(
  createStore: () => RateCapStore | Promise<RateCapStore>,
  options: RateCapStoreConformanceOptions,
): void {
  if (typeof options?.describe !== 'function' || typeof options.it !== 'function')
    throw new ConfigError(
      'runRateCapStoreConformance: pass { describe, it } from your test runner.',
    )
  const { describe, it } = options
  const rate = () => `rate_${randomBytes(6).toString('hex')}`
  const limits: RateLimits = { ceiling: 20, floor: 0.5, raiseEveryMs: 1_000 }
  // A time of the kind Date.now gives, with a fraction: turns are kept to the fraction.
  const start = 1_893_456_000_000.25

  describe(options.name ?? 'RateCapStore conformance', () => {
    it('a rate never used starts at its ceiling; turns spaced by it; a 429 halves it; a Retry-After pauses it', async () => {
      const store = await createStore()
      const name = rate()
      assert.deepEqual(await store.reserveTurn(name, limits, start), { at: start, perSecond: 20 })
      assert.deepEqual(await store.reserveTurn(name, limits, start), {
        at: start + 50,
        perSecond: 20,
      })
      await store.throttleRate(name, limits, start + 10, 3_000)
      assert.deepEqual(await store.reserveTurn(name, limits, start + 20), {
        at: start + 3_010,
        perSecond: 10,
      })
    })

    it('any run of turns and 429s: the turns the plan computes, exactly', async () => {
      const store = await createStore()
      const name = rate()
      const random = seeded(0x5eed)
      let turns: RateTurns | undefined
      let now = start
      for (let i = 0; i < 300; i++) {
        now += Math.floor(random() * 400) + (random() < 0.3 ? random() : 0)
        if (random() < 0.1) {
          const retryAfter = random() < 0.5 ? undefined : Math.floor(random() * 2_000)
          turns = throttleTurns(turns, limits, now, retryAfter)
          await store.throttleRate(name, limits, now, retryAfter)
          continue
        }
        const planned = reserveTurn(turns, limits, now)
        turns = planned.turns
        assert.deepEqual(
          await store.reserveTurn(name, limits, now),
          { at: planned.at, perSecond: planned.turns.perSecond },
          `turn ${i}`,
        )
      }
    })

    it('of 50 turns reserved at once, each its own, spaced by the rate', async () => {
      const store = await createStore()
      const name = rate()
      const turns = await Promise.all(
        Array.from({ length: 50 }, () => store.reserveTurn(name, limits, start)),
      )
      const at = turns.map((t) => t.at).sort((a, b) => a - b)
      assert.deepEqual(
        at,
        Array.from({ length: 50 }, (_, i) => at[0]! + i * 50),
      )
      assert.equal(at[0], start)
    })

    if (options.corrupt !== undefined) hostileRates(it, createStore, options.corrupt, rate)

    it('names are separate rates', async () => {
      const store = await createStore()
      const [a, b] = [rate(), rate()]
      await store.reserveTurn(a, limits, start)
      await store.throttleRate(a, limits, start, 60_000)
      assert.deepEqual(await store.reserveTurn(b, limits, start), { at: start, perSecond: 20 })
    })
  })
}

/** The stored rate written with hostile values: every read checked (the `corrupt` option). */
function hostileRates(
  it: StoreConformanceOptions['it'],
  createStore: () => RateCapStore | Promise<RateCapStore>,
  corrupt: NonNullable<RateCapStoreConformanceOptions['corrupt']>,
  rate: () => string,
): void {
  const limits: RateLimits = { ceiling: 20, floor: 0.5, raiseEveryMs: 1_000 }
  const start = 1_893_456_000_000.25
  it('a stored rate written with what no plan writes (NaN, infinities, 0, a day ahead): the next turn is at most one bounded wait away, at a rate within its limits, and the rate goes on', async () => {
    const store = await createStore()
    for (const field of ['perSecond', 'movedAt', 'pausedUntil', 'lastAt'] as const)
      for (const value of HOSTILE(start)) {
        const name = rate()
        await store.reserveTurn(name, limits, start)
        await store.throttleRate(name, limits, start, 10)
        const written = await corrupt(name, field, value).then(
          () => true,
          () => false,
        )
        if (!written) continue
        const what = `${field} = ${value}`
        for (const throttleFirst of [false, true]) {
          if (throttleFirst) await store.throttleRate(name, limits, start + 1, Number.NaN)
          const turn = await store.reserveTurn(name, limits, start + 2)
          assert.ok(turn.at >= start + 2 && turn.at <= latestTurn(limits, start + 2), what)
          assert.ok(turn.perSecond >= limits.floor && turn.perSecond <= limits.ceiling, what)
        }
        // And on: a turn an hour later goes at once.
        const later = await store.reserveTurn(name, limits, start + 3_600_000)
        assert.equal(later.at, start + 3_600_000, what)
      }
  })
}
