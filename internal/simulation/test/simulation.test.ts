import { describe, expect, it } from 'vitest'
import { runSimulation } from '../src/index.js'

// The simulation at a size the tests can afford, several seeds: the real sweep against the
// service model for two days. The same seed gives the same run; every target of the million-
// account bench holds here too.

describe('simulation', () => {
  for (const seed of [1, 2, 3])
    it(`10,000 accounts, seed ${seed}: active accounts listed at most 0.05 times a day, every disabled webhook made again within the period (and two steps and an outage), the service never past its capacity`, async () => {
      const report = await runSimulation({ accounts: 10_000, seed })
      if (process.env.SIMULATION_REPORT) console.log(JSON.stringify(report))
      expect(report.listsPerActiveAccountPerDay).toBeLessThanOrEqual(0.05)
      expect(report.listsPerQuietAccountPerDay).toBeGreaterThan(0.9)
      expect(report.listsPerQuietAccountPerDay).toBeLessThanOrEqual(1.05)
      expect(report.disabled).toBeGreaterThan(0)
      // Within the period, give or take the steps and an outage that held the check up.
      expect(report.quietRepairedWithinBound).toBe(report.quietDisabled)
      expect(report.repaired).toBe(report.disabled)
      expect(report.repairMs.max).toBeLessThanOrEqual(report.boundMs)
      expect(report.peakPerSecond).toBeLessThanOrEqual(report.capPerSecond + 1)
    })

  it('the sweep called every 5 minutes as a cron calls runDue(), 10,000 accounts, two days with outages: every disabled webhook made again within the period plus two calls (and an outage), each quiet account listed once a day', async () => {
    const report = await runSimulation({ accounts: 10_000, seed: 7, cadenceMs: 5 * 60_000 })
    if (process.env.SIMULATION_REPORT) console.log(JSON.stringify(report))
    expect(report.disabled).toBeGreaterThan(0)
    expect(report.repaired).toBe(report.disabled)
    expect(report.quietRepairedWithinBound).toBe(report.quietDisabled)
    expect(report.repairMs.max).toBeLessThanOrEqual(report.boundMs)
    expect(report.listsPerQuietAccountPerDay).toBeGreaterThan(0.9)
    expect(report.listsPerQuietAccountPerDay).toBeLessThanOrEqual(1.05)
    expect(report.listsPerActiveAccountPerDay).toBeLessThanOrEqual(0.05)
  })

  it('refresh ahead called every 5 minutes as a cron calls runDue(), 2,000 accounts connected in one minute, a day: no refresh on the request path, none lost', async () => {
    const report = await runSimulation({
      accounts: 2_000,
      seed: 8,
      days: 1,
      refreshAhead: true,
      outages: false,
      cadenceMs: 5 * 60_000,
    })
    expect(report.refresh!.tokenCalls).toBeGreaterThan(2_000 * 0.8 * (1_440 / 100))
    expect(report.refresh!.requestPathRefreshes).toBe(0)
    expect(report.refresh!.lost).toBe(0)
  })

  it('a service answering fewer requests a second than the cap: its 429s lower the rate, and no account is lost (a failed check is tried again at the next step)', async () => {
    const report = await runSimulation({ accounts: 10_000, seed: 4, capacity: 3, outages: false })
    expect(report.requests.throttled).toBeGreaterThan(0)
    expect(report.listsPerQuietAccountPerDay).toBeGreaterThan(0.9)
    expect(report.repaired).toBe(report.disabled)
    expect(report.quietRepairedWithinBound).toBe(report.quietDisabled)
  })

  it('refresh ahead, 10,000 accounts connected in one minute, a day: each refreshed at its turns, none on the request path, none lost, the busiest minute at most 1.25x the mean', async () => {
    const report = await runSimulation({
      accounts: 10_000,
      seed: 5,
      days: 1,
      refreshAhead: true,
      outages: false,
    })
    if (process.env.SIMULATION_REPORT) console.log(JSON.stringify(report.refresh))
    const refresh = report.refresh!
    expect(refresh.requestPathRefreshes).toBe(0)
    expect(refresh.lost).toBe(0)
    expect(refresh.failed).toBe(0)
    // A turn each 100 minutes: 14.4 a day each, the first ones left when just connected.
    expect(refresh.tokenCalls).toBeGreaterThanOrEqual(10_000 * 14)
    expect(refresh.tokenCalls).toBeLessThanOrEqual(10_000 * 15)
    expect(refresh.busiestMinuteToMean).toBeLessThanOrEqual(1.25)
  })

  it('refresh ahead through a 30-minute outage of the token endpoint: the failed turns are tried again over the next steps (the busiest minute at most 5x the mean), none lost; the request path tries only tokens past their margin meanwhile', async () => {
    const report = await runSimulation({ accounts: 3_000, seed: 6, days: 1, refreshAhead: true })
    if (process.env.SIMULATION_REPORT) console.log(JSON.stringify(report.refresh))
    const refresh = report.refresh!
    expect(refresh.failed).toBeGreaterThan(0)
    expect(refresh.lost).toBe(0)
    // Only what fell due in the outage and reached its last 5 minutes before it ended.
    expect(refresh.requestPathRefreshes).toBeLessThanOrEqual(3_000 * 0.1)
    // The turns it held up spread over the steps after it: all at once made 29.7x.
    expect(refresh.busiestMinuteToMean).toBeLessThanOrEqual(5)
  })

  it('the same seed, the same run', async () => {
    const [a, b] = [
      await runSimulation({ accounts: 2_000, seed: 7 }),
      await runSimulation({ accounts: 2_000, seed: 7 }),
    ]
    const strip = ({ wallMs: _, heapBytesPerAccount: __, ...rest }: typeof a) => rest
    expect(strip(a)).toEqual(strip(b))
  })
})
