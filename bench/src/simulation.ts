// The simulation at a million accounts (BENCH_SIM_ACCOUNTS), two simulated days (BENCH_SIM_DAYS),
// seeded (BENCH_SIM_SEED): the real sweep, rate cap and repair code against the service model on
// a virtual clock. Printed: requests a day (total, per active and per quiet account), repair
// times of the webhooks disabled, the peak request rate against the cap, failed checks, memory
// per account, wall time. Targets: list requests for active accounts at most 0.05 per account a
// day; every disabled webhook of a quiet account repaired within the period (give or take two
// steps and an outage); the service's peak rate within the cap. With BENCH_SIM_REFRESH=1, refresh
// ahead too (every account connected in one minute): token calls, refreshes on the request path
// (target 0), connections lost (0), the busiest minute's token calls against the mean (1.25). It
// runs the real token managers per refresh: about 2 ms of CPU an account and simulated day, so
// give it 100,000 accounts, not a million. With BENCH_SIM_CATCHUP=1, catch-up after each outage
// (the real handler and ledger; a run stopped halfway and taken up): lists a run per account
// (target 2), accounts the taken-up call listed again (0), changes never applied (0), and how
// long a run took under the cap.
import { runSimulation } from '@scheduling-kit/simulation'
import type { Target } from './harness.js'

const ACCOUNTS = Number(process.env.BENCH_SIM_ACCOUNTS ?? 1_000_000)
const DAYS = Number(process.env.BENCH_SIM_DAYS ?? 2)
const SEED = Number(process.env.BENCH_SIM_SEED ?? 1)
const REFRESH = process.env.BENCH_SIM_REFRESH === '1'
const CATCH_UP = process.env.BENCH_SIM_CATCHUP === '1'
// The app's cap in requests a second (BENCH_SIM_CAP, default 20), the service's capacity a
// quarter above it: a million accounts' catch-up needs about 185 a second for a 3-hour run.
const CAP = process.env.BENCH_SIM_CAP === undefined ? undefined : Number(process.env.BENCH_SIM_CAP)

export async function simulationBench(): Promise<Target[]> {
  const r = await runSimulation({
    accounts: ACCOUNTS,
    seed: SEED,
    days: DAYS,
    refreshAhead: REFRESH,
    catchUp: CATCH_UP,
    // BENCH_SIM_OUTAGES=0: no outage (refresh ahead's spread is judged without one).
    outages: process.env.BENCH_SIM_OUTAGES !== '0',
    ...(process.env.BENCH_SIM_CATCHUP_CONCURRENCY === undefined
      ? {}
      : { catchUpConcurrency: Number(process.env.BENCH_SIM_CATCHUP_CONCURRENCY) }),
    ...(CAP === undefined ? {} : { capPerSecond: CAP, capacity: Math.ceil(CAP * 1.25) }),
    // BENCH_SIM_CADENCE_MS=300000: the periodic work called every 5 minutes, as a cron calls
    // runDue(), each call stepping until caught up.
    ...(process.env.BENCH_SIM_CADENCE_MS === undefined
      ? {}
      : { cadenceMs: Number(process.env.BENCH_SIM_CADENCE_MS) }),
  })
  const h = (ms: number) => `${(ms / 3_600_000).toFixed(1)} h`
  const cadence = process.env.BENCH_SIM_CADENCE_MS
  console.log(
    `\n## Simulation: ${ACCOUNTS.toLocaleString('en')} accounts, ${DAYS} day(s), seed ${SEED}${cadence === undefined ? '' : `, called every ${Number(cadence) / 60_000} min`}`,
  )
  console.log(
    `requests: ${r.requests.list} lists, ${r.requests.create} creates, ${r.requests.delete} deletes; ${r.requests.throttled} answered 429, ${r.requests.unavailable} 503 (outage)`,
  )
  console.log(
    `lists a day: ${r.listsPerActiveAccountPerDay.toFixed(4)} per active account, ${r.listsPerQuietAccountPerDay.toFixed(4)} per quiet account`,
  )
  console.log(
    `disabled ${r.disabled}, repaired ${r.repaired}: p50 ${h(r.repairMs.p50)}, p99 ${h(r.repairMs.p99)}, max ${h(r.repairMs.max)}; quiet accounts within the period ${r.quietRepairedWithinPeriod}/${r.quietDisabled}, within ${h(r.boundMs)} ${r.quietRepairedWithinBound}/${r.quietDisabled}`,
  )
  console.log(
    `peak ${r.peakPerSecond} requests a second (cap ${r.capPerSecond}); ${r.failedChecks} checks failed and were tried again; ${r.steps} steps; ${Math.round(r.heapBytesPerAccount)} B of heap per account; ${(r.wallMs / 1000).toFixed(0)} s`,
  )
  const refresh = r.refresh
  if (refresh !== undefined)
    console.log(
      `refresh ahead: ${refresh.tokenCalls} token calls, ${refresh.requestPathRefreshes} on the request path, ${refresh.failed} failed and tried again, ${refresh.lost} lost; busiest minute ${refresh.busiestMinuteToMean.toFixed(3)}x the mean`,
    )
  const catchUp = r.catchUp
  if (catchUp !== undefined)
    console.log(
      `catch-up: ${catchUp.runs} runs after outages (${catchUp.failedRuns} calls failed, ${catchUp.failedDeliveries} deliveries failed), ${catchUp.listsPerAccountPerRun.toFixed(4)} lists an account a run, ${catchUp.listedTwice} listed again by the call that took a run up, ${catchUp.changes} changes, ${catchUp.missed} never applied; longest run ${h(catchUp.longestRunMs)} at ${r.capPerSecond} requests a second`,
    )
  const catchUpTargets: Target[] =
    catchUp === undefined
      ? []
      : [
          {
            what: 'simulation: catch-up changes never applied',
            ratio: catchUp.missed,
            limit: 0,
            kind: 'max',
            unit: '',
          },
          {
            what: 'simulation: catch-up lists a run per account',
            ratio: catchUp.listsPerAccountPerRun,
            limit: 2,
            kind: 'max',
            unit: '',
          },
        ]
  const refreshTargets: Target[] =
    refresh === undefined
      ? []
      : [
          {
            what: 'simulation: refreshes on the request path',
            ratio: refresh.requestPathRefreshes,
            limit: 0,
            kind: 'max',
            unit: '',
          },
          {
            // Called at a cadence, each call takes the turns of its whole interval: the
            // busiest minute holds one call's, the cadence in minutes times the mean.
            what: 'simulation: token calls, busiest minute over the mean',
            ratio: refresh.busiestMinuteToMean,
            limit: 1.25 * Math.max(1, Number(process.env.BENCH_SIM_CADENCE_MS ?? 0) / 60_000),
            kind: 'max',
          },
        ]
  return [
    ...catchUpTargets,
    ...refreshTargets,
    {
      what: `simulation: lists per active account a day (${ACCOUNTS.toLocaleString('en')} accounts)`,
      ratio: r.listsPerActiveAccountPerDay,
      limit: 0.05,
      kind: 'max',
      unit: '',
    },
    {
      what: 'simulation: quiet accounts disabled and not repaired within the bound',
      ratio: r.quietDisabled - r.quietRepairedWithinBound,
      limit: 0,
      kind: 'max',
      unit: '',
    },
    {
      // The app's state (the sweep's, the rate cap's, refresh ahead's and catch-up's when on)
      // and the service model's, after a collection: about 1 KB an account.
      what: 'simulation: heap per account (the app and the service model)',
      ratio: Math.round(r.heapBytesPerAccount),
      limit: 1_536,
      kind: 'max',
      unit: ' B',
    },
    {
      what: 'simulation: peak requests a second over the cap',
      ratio: r.peakPerSecond / r.capPerSecond,
      limit: 1,
      kind: 'max',
    },
  ]
}
