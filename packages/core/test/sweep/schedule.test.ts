import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  dueIn,
  inPhases,
  lastTurn,
  PHASES,
  phaseOf,
  phasesDue,
  shardOf,
  slotOf,
  stepWindow,
} from '../../src/sweep/schedule.js'

// The rolling schedule, by properties: windows laid end to end over a period find every account
// exactly once, however they are cut; a hundred thousand accounts spread evenly over the period
// and over the shards; a step never covers more than its bound, nor anything on a first step.

const DAY = 86_400_000
const keys = Array.from({ length: 100_000 }, (_, i) => `acct_${i}`)

describe('rolling schedule', () => {
  it('property: the last turn is at or before now, within a period of it, on the slot', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 * DAY }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.integer({ min: -DAY, max: 100 * DAY }),
        (period, at, now) => {
          const slot = Math.floor(at * period)
          const turn = lastTurn(slot, period, now)
          expect(turn).toBeLessThanOrEqual(now)
          expect(turn).toBeGreaterThan(now - period)
          expect((((turn - slot) % period) + period) % period).toBe(0)
        },
      ),
    )
  })

  it("property: the phases due for a step's windows hold every account due in any of them, and little more", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 10 * DAY }),
        fc.integer({ min: -DAY, max: 10 * DAY }),
        fc.array(
          fc.tuple(fc.integer({ min: 0, max: DAY }), fc.double({ min: 0, max: 1.2, noNaN: true })),
          {
            maxLength: 4,
          },
        ),
        (accounts, period, start, shape) => {
          const windows = shape.map(([skew, length]) => ({
            from: start + (skew % Math.max(1, Math.floor(period / 10))),
            to: start + (skew % Math.max(1, Math.floor(period / 10))) + Math.floor(length * period),
          }))
          const phases = phasesDue(windows, period)
          const due = (key: string) =>
            windows.some((w) => dueIn(slotOf(key, period), period, w.from, w.to))
          if (phases === 'none') expect(accounts.filter(due)).toEqual([])
          if (phases === 'none' || phases === 'all') return
          for (const key of accounts.filter(due)) expect(inPhases(phaseOf(key), phases)).toBe(true)
          // The range is the windows' span of the period, and a few phases around its ends.
          const span =
            Math.max(...windows.map((w) => w.to)) - Math.min(...windows.map((w) => w.from))
          const width = (phases.to - phases.from + PHASES) % PHASES
          expect(width).toBeLessThanOrEqual(((span + 2) / period) * PHASES + 8)
        },
      ),
      { numRuns: 500 },
    )
    expect(phasesDue([{ from: 5, to: 5 }], 100)).toBe('none')
    expect(phasesDue([{ from: 0, to: 100 }], 100)).toBe('all')
  })

  it('property: windows end to end over one period, cut anywhere, find each account exactly once', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 50 }),
        fc.integer({ min: 1, max: 10 * DAY }),
        fc.integer({ min: -DAY, max: 10 * DAY }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
        (accounts, period, start, cuts) => {
          const bounds = [
            start,
            ...cuts.map((c) => start + Math.floor(c * period)).sort((a, b) => a - b),
            start + period,
          ]
          for (const key of accounts) {
            const slot = slotOf(key, period)
            expect(slot).toBeGreaterThanOrEqual(0)
            expect(slot).toBeLessThan(period)
            let found = 0
            for (let i = 1; i < bounds.length; i++)
              if (dueIn(slot, period, bounds[i - 1]!, bounds[i]!)) found++
            expect(found).toBe(1)
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('100,000 accounts spread over a day: no hundredth of it holds more than 1.15x the mean; no shard of 16 more than 1.05x', () => {
    const windows = new Array(100).fill(0)
    const shards = new Array(16).fill(0)
    for (const key of keys) {
      windows[Math.floor(slotOf(key, DAY) / (DAY / 100))]++
      shards[shardOf(key, 16)]++
    }
    expect(Math.max(...windows) / (keys.length / 100)).toBeLessThan(1.15)
    expect(Math.min(...windows) / (keys.length / 100)).toBeGreaterThan(0.85)
    expect(Math.max(...shards) / (keys.length / 16)).toBeLessThan(1.05)
    // The shard and the time are drawn apart: each shard's accounts cover the whole day.
    const shardZero = keys.filter((k) => shardOf(k, 16) === 0)
    const halves = [0, 0]
    for (const key of shardZero) halves[slotOf(key, DAY) < DAY / 2 ? 0 : 1]! += 1
    expect(Math.min(...halves) / Math.max(...halves)).toBeGreaterThan(0.9)
  })

  it('a step: nothing on a shard never stepped; at most maxStepMs; at most one period back', () => {
    expect(stepWindow(undefined, 5_000, DAY, 100)).toEqual({ from: 5_000, to: 5_000 })
    expect(stepWindow(4_000, 5_000, DAY, 100)).toEqual({ from: 4_000, to: 4_100 })
    expect(stepWindow(4_950, 5_000, DAY, 100)).toEqual({ from: 4_950, to: 5_000 })
    expect(stepWindow(0, 3 * DAY, DAY, DAY)).toEqual({ from: 2 * DAY, to: 3 * DAY })
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 * DAY }),
        fc.integer({ min: 0, max: 10 * DAY }),
        fc.integer({ min: 1, max: DAY }),
        (checkpoint, now, step) => {
          const w = stepWindow(checkpoint, now, DAY, step)
          expect(w.to - w.from).toBeLessThanOrEqual(step)
          expect(w.to).toBeLessThanOrEqual(Math.max(now, checkpoint))
          expect(w.from).toBeGreaterThanOrEqual(Math.min(checkpoint, now - DAY) - 0)
        },
      ),
    )
  })
})
