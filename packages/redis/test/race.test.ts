import { randomBytes } from 'node:crypto'
import { runRefreshRace, runRefreshRaceFaults } from '@scheduling-kit/testing'
import { afterEach, describe, expect, it } from 'vitest'

// Eight OS processes x 25 callers, each process with its own ioredis client and token manager,
// against a strict token endpoint (single-use rotating refresh tokens).
const storeModule = new URL('./fixtures/race-store.mjs', import.meta.url)

afterEach(() => {
  delete process.env.RACE_WITHOUT_LEASE
})

function prefix(): void {
  process.env.RACE_PREFIX = `sk-race:${randomBytes(4).toString('hex')}:`
}

it('8 processes x 25 callers, 5 expiries: exactly one refresh per expiry, no caller error', async () => {
  prefix()
  const report = await runRefreshRace({ storeModule })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
    Array(5).fill([1, 200, 0]),
  )
}, 60_000)

it('the lease holder killed with SIGKILL mid-refresh: the others go on once its lease expires', async () => {
  prefix()
  const report = await runRefreshRace({ storeModule, killLeaseHolder: true })
  expect(report.problems).toEqual([])
  const [first, ...rest] = report.rounds
  expect(first!.killed).toBe(true)
  expect(first!.callers).toBe(7 * 25)
  expect(first!.durationMs).toBeGreaterThanOrEqual(2_800) // the others waited for its 3 s lease
  for (const round of rest) expect(round.callers).toBe(200)
}, 60_000)

// Killed at random instants, after the answer, SIGTERMed, its connection cut at the write.
runRefreshRaceFaults({ describe, it, storeModule, prepare: prefix })

it('the kit catches a store without the lease: more than one refresh per expiry', async () => {
  prefix()
  process.env.RACE_WITHOUT_LEASE = '1'
  const report = await runRefreshRace({ storeModule, processes: 4, expiries: 1 })
  expect(report.problems.join('\n')).toMatch(/refresh requests, not 1/)
}, 60_000)
