import { judgeCatchUp, scheduleCatchUp } from './catch-up.js'
import { untilCaughtUp } from './drain.js'
import { judge, judgeRefresh } from './judge.js'
import { seeded } from './random.js'
import { buildRefresh, type RefreshRun } from './refresh.js'
import type { SimulationOptions, SimulationReport } from './types.js'
import { buildWorld, DAY, type World } from './world.js'

// A day (or more) of an app with many connected accounts, on a virtual clock, seeded: the real
// subscriptions sweep, rate cap and repair code against the service model (`world.ts`). A share
// of the accounts is active (deliveries at random, several a day); webhooks are disabled at
// random times; the service has a latency, a capacity past which it answers 429 and an outage a
// day. With `refreshAhead`, the real token managers and refresh ahead too (`refresh.ts`), against
// the service's token endpoint. `judge.ts` reads what came of it.

export type { SimulationOptions, SimulationReport }

export async function runSimulation(options: SimulationOptions): Promise<SimulationReport> {
  // The code under test draws with Math.random (a step's first shard, the client's backoff
  // jitter): seeded for the run, so that the same seed gives the same run.
  const random = Math.random
  Math.random = seeded(options.seed ^ 0x2545f491)
  try {
    return await simulate(options)
  } finally {
    Math.random = random
  }
}

async function simulate(options: SimulationOptions): Promise<SimulationReport> {
  const started = performance.now()
  ;(globalThis as { gc?: () => void }).gc?.()
  const heapBefore = process.memoryUsage().heapUsed
  const world = await buildWorld(options)
  scheduleDisables(world, options)
  const { clock, start, days, subscriptions } = world
  // A step every hundredth of the day, as a timer each instance would run; or, at a cadence,
  // each call stepping until caught up, as runDue() does.
  let steps = 0
  let failedChecks = 0
  const sweeps: Promise<void>[] = []
  const cadence = options.cadenceMs
  for (let t = start; t <= start + days * DAY; t += cadence ?? DAY / 100)
    clock.at(t, () => {
      sweeps.push(
        untilCaughtUp(cadence !== undefined, (first) => subscriptions.sweep({ retry: first })).then(
          (reports) => {
            steps += reports.length
            for (const report of reports) failedChecks += report.failed.length
          },
        ),
      )
    })
  const refresh = options.refreshAhead ? await scheduleRefresh(world, options, sweeps) : undefined
  const catchUp = options.catchUp
    ? scheduleCatchUp(world, sweeps, options.catchUpConcurrency)
    : undefined
  await clock.runUntil(start + days * DAY + DAY / 100)
  // What is still under way at the end (a catch-up begun after the last outage) runs on.
  // One that failed ends it too (and is thrown below), not the clock running on for ever.
  let done = false
  const all = Promise.all(sweeps).finally(() => {
    done = true
  })
  all.catch(() => {})
  while (!done) await clock.runUntil(clock.now() + 60_000)
  await all
  ;(globalThis as { gc?: () => void }).gc?.()
  const heapBytesPerAccount = (process.memoryUsage().heapUsed - heapBefore) / options.accounts
  const wallMs = Math.round(performance.now() - started)
  const report = judge(world, { steps, failedChecks, heapBytesPerAccount, wallMs })
  if (refresh !== undefined) report.refresh = await judgeRefresh(world, refresh)
  if (catchUp !== undefined) report.catchUp = judgeCatchUp(world, catchUp)
  return report
}

/** Refresh ahead stepped every minute, the app reading its minute's share of active tokens. */
async function scheduleRefresh(
  world: World,
  options: SimulationOptions,
  steps: Promise<void>[],
): Promise<RefreshRun> {
  const { clock, service, keys, start, days, random } = world
  const refresh = await buildRefresh(clock, service, keys, random)
  const active = keys.filter(world.active)
  const perMinute = (active.length * (options.deliveriesPerDay ?? 8)) / 1_440
  const cadence = options.cadenceMs
  for (let t = start; t < start + days * DAY; t += 60_000) {
    // Refresh ahead stepped each minute, or at the cadence's calls, each until caught up.
    const stepsNow = cadence === undefined || (t - start) % cadence === 0
    clock.at(t, () => {
      const reads: string[] = []
      for (let n = perMinute + random(); n >= 1 && active.length > 0; n--)
        reads.push(active[Math.floor(random() * active.length)]!)
      steps.push(refresh.step(reads, stepsNow ? (cadence === undefined ? 'one' : 'drain') : 'none'))
    })
  }
  return refresh
}

/** Disables, each of a random account at a random time, early enough to be judged in the run. */
function scheduleDisables(world: World, options: SimulationOptions): void {
  const { clock, service, keys, disabledAt, start, days, boundMs, random } = world
  const window = Math.max(0, days * DAY - boundMs)
  const count = window === 0 ? 0 : (options.disables ?? Math.max(1, Math.round(keys.length / 1000)))
  for (let i = 0; i < count; i++) {
    const key = keys[Math.floor(random() * keys.length)]!
    clock.at(start + Math.floor(random() * window), () => {
      if (!disabledAt.has(key) && service.disable(key)) disabledAt.set(key, clock.now())
    })
  }
}
