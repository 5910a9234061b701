import { describe, expect, it } from 'vitest'
import { runSimulation } from '../src/index.js'

// Catch-up in the simulation: the real handler, ledger and catch-up over the service model's
// Events, after each outage, a run stopped halfway and taken up.

describe('simulation: catch-up', () => {
  it('catch-up after each outage, 2,000 accounts, 2 days: every change the outages made applied, 2 lists an account a run, a run stopped halfway taken up listing only what it left', async () => {
    const report = await runSimulation({ accounts: 2_000, seed: 8, catchUp: true })
    if (process.env.SIMULATION_REPORT) console.log(JSON.stringify(report.catchUp))
    const catchUp = report.catchUp!
    expect(catchUp.runs).toBe(2)
    expect(catchUp.failedRuns).toBe(0)
    expect(catchUp.failedDeliveries).toBe(0)
    expect(catchUp.changes).toBeGreaterThan(0)
    expect(catchUp.missed).toBe(0)
    // Each account listed twice a run (upcoming, then the past down to since). The stopped
    // call's workers end their accounts before it rejects, so the call that takes the run up
    // lists none of them again.
    expect(catchUp.listedTwice).toBe(0)
    expect(catchUp.listsPerAccountPerRun).toBe(2)
  })
})
