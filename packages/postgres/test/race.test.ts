import { runRefreshRace } from '@scheduling-kit/testing'
import { beforeAll, expect, it } from 'vitest'
import { migratedSchema } from './helpers.js'

// Eight OS processes x 25 callers, each with its own pg Pool and token manager, against a
// strict token endpoint (single-use rotating refresh tokens).
const storeModule = new URL('./fixtures/race-store.mjs', import.meta.url)

beforeAll(async () => {
  process.env.RACE_SCHEMA = await migratedSchema('race')
})

it('8 processes x 25 callers, 5 expiries: exactly one refresh per expiry, no caller error', async () => {
  const report = await runRefreshRace({ storeModule })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
    Array(5).fill([1, 200, 0]),
  )
}, 60_000)

it('the lease holder killed with SIGKILL mid-refresh: the others go on once its lease expires', async () => {
  const report = await runRefreshRace({ storeModule, killLeaseHolder: true })
  expect(report.problems).toEqual([])
  const [first, ...rest] = report.rounds
  expect(first!.killed).toBe(true)
  expect(first!.callers).toBe(7 * 25)
  expect(first!.durationMs).toBeGreaterThanOrEqual(1_800) // the others waited for its 2 s lease
  for (const round of rest) expect(round.callers).toBe(200)
}, 60_000)

it('the lease holder killed with SIGKILL at random instants of its refresh, with a server that has a reuse grace period: nothing lost', async () => {
  const report = await runRefreshRace({
    storeModule,
    stop: 'random',
    stopRounds: 6,
    expiries: 7,
    processes: 4,
    callers: 10,
    server: { reuseGraceMs: 15_000 },
  })
  expect(report.problems).toEqual([])
  expect(report.rounds.filter((r) => r.killed)).toHaveLength(6)
  expect(report.rounds.filter((r) => r.lost)).toHaveLength(0)
}, 120_000)

it('killed after the answer, before the write (the crash window): a strict server loses the connection, one with a grace period does not', async () => {
  const strict = await runRefreshRace({
    storeModule,
    stop: 'after-answer',
    expiries: 1,
    processes: 3,
    callers: 5,
  })
  expect(strict.rounds[0]).toMatchObject({ killed: true, lost: true })
  const grace = await runRefreshRace({
    storeModule,
    stop: 'after-answer',
    expiries: 2,
    processes: 3,
    callers: 5,
    server: { reuseGraceMs: 15_000 },
  })
  expect(grace.problems).toEqual([])
  expect(grace.rounds[0]).toMatchObject({ killed: true, lost: false, refreshes: 2 })
}, 120_000)

it('the store connection cut at the write after the refresh: the write is retried, nothing lost (strict server)', async () => {
  const report = await runRefreshRace({ storeModule, cutStoreAtWrite: true, expiries: 2 })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.lost])).toEqual([
    [1, false],
    [1, false],
  ])
}, 60_000)

it('SIGTERM to the lease holder at random instants: it finishes its refresh and exits, nothing lost (strict server)', async () => {
  const report = await runRefreshRace({
    storeModule,
    stop: 'terminate',
    stopRounds: 5,
    expiries: 6,
    processes: 4,
    callers: 10,
  })
  expect(report.problems).toEqual([])
  expect(report.rounds.filter((r) => r.killed)).toHaveLength(5)
  for (const round of report.rounds) expect(round.refreshRequests).toBe(1)
}, 120_000)
