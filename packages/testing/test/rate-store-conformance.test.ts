import { MemorySweepStore, type RateCapStore, type RateLimits } from '@scheduling-kit/core'
import { type RateTurns, reserveTurn } from '@scheduling-kit/core/store'
import { describe, expect, it } from 'vitest'
import { runRateCapStoreConformance } from '../src/index.js'

runRateCapStoreConformance(() => new MemorySweepStore(), {
  describe,
  it,
  name: 'MemorySweepStore: RateCapStore conformance',
})

// The kit must fail a store that breaks its promises: its tests run by hand against a store
// that reads and writes a rate in two steps (turns reserved at once collide), and one that
// forgets 429s.
describe('runRateCapStoreConformance against broken stores', () => {
  const failuresOf = async (create: () => RateCapStore) => {
    const tests: Array<[string, () => Promise<void>]> = []
    runRateCapStoreConformance(create, {
      describe: (_name, fn) => fn(),
      it: (name, fn) => void tests.push([name, fn]),
    })
    const failed: string[] = []
    for (const [name, fn] of tests) await fn().catch(() => failed.push(name))
    return failed
  }

  it('fails a store whose turns are read and written apart', async () => {
    const failed = await failuresOf(() => {
      const inner = new MemorySweepStore()
      const rates = new Map<string, RateTurns>()
      return {
        // Reads the rate, waits, then writes its turn: callers racing read the same rate.
        reserveTurn: async (name: string, limits: RateLimits, now: number) => {
          const seen = rates.get(name)
          await new Promise((resolve) => setImmediate(resolve))
          const { turns, at } = reserveTurn(seen, limits, now)
          rates.set(name, turns)
          return { at, perSecond: turns.perSecond }
        },
        throttleRate: inner.throttleRate.bind(inner),
      }
    })
    expect(failed).toContain('of 50 turns reserved at once, each its own, spaced by the rate')
  })

  it('fails a store that forgets 429s', async () => {
    const failed = await failuresOf(() => {
      const inner = new MemorySweepStore()
      return { reserveTurn: inner.reserveTurn.bind(inner), throttleRate: async () => {} }
    })
    expect(failed).toContain(
      'a rate never used starts at its ceiling; turns spaced by it; a 429 halves it; a Retry-After pauses it',
    )
    expect(failed).toContain('any run of turns and 429s: the turns the plan computes, exactly')
  })
})
