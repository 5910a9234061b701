import { runRateCapRace } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'
import { uniquePrefix } from './helpers.js'

// Three OS processes keep one request rate through Redis: each turn any of them is given comes
// the rate's spacing after the one before, and a 429 one of them answers lowers the rate the
// others are given. The turns are checked as the store gave them, not by the clock.

it('3 processes, one rate: every turn spaced from the last by its rate; a 429 in one lowers it for the others', async () => {
  process.env.RACE_PREFIX = uniquePrefix('rate-race')
  const report = await runRateCapRace({
    storeModule: new URL('./fixtures/rate-store.mjs', import.meta.url),
  })
  expect(report.problems).toEqual([])
  expect(report.turns).toHaveLength(120)
  expect(new Set(report.turns.map((t) => t.perSecond))).toEqual(new Set([50, 25]))
})
