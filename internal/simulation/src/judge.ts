import type { RefreshRun } from './refresh.js'
import type { RefreshFigures, SimulationReport } from './types.js'
import { DAY, type World } from './world.js'

// What a simulation tells, read from its world once it ran: requests by kind and account,
// repair times of the disabled webhooks, the peak rate.

export function judge(
  world: World,
  run: { steps: number; failedChecks: number; heapBytesPerAccount: number; wallMs: number },
): SimulationReport {
  const { service, keys, active, disabledAt, days, boundMs } = world
  const activeKeys = keys.filter(active)
  const listsOf = (list: string[]) => list.reduce((n, k) => n + (service.listsOf.get(k) ?? 0), 0)
  const repairTimes: number[] = []
  let quietDisabled = 0
  let quietRepairedWithinPeriod = 0
  let quietRepairedWithinBound = 0
  for (const [key, at] of disabledAt) {
    const made = service.createdAt.get(key)
    const took = made === undefined || made < at ? undefined : made - at
    if (took !== undefined) repairTimes.push(took)
    if (!active(key)) {
      quietDisabled++
      if (took !== undefined && took <= DAY) quietRepairedWithinPeriod++
      if (took !== undefined && took <= boundMs) quietRepairedWithinBound++
    }
  }
  repairTimes.sort((a, b) => a - b)
  const at = (q: number) =>
    repairTimes[Math.min(repairTimes.length - 1, Math.floor(q * repairTimes.length))] ?? 0
  return {
    accounts: keys.length,
    days,
    requests: { ...service.counts },
    listsPerActiveAccountPerDay: listsOf(activeKeys) / Math.max(1, activeKeys.length) / days,
    listsPerQuietAccountPerDay:
      (listsOf(keys) - listsOf(activeKeys)) / Math.max(1, keys.length - activeKeys.length) / days,
    disabled: disabledAt.size,
    repaired: repairTimes.length,
    repairMs: { p50: at(0.5), p99: at(0.99), max: repairTimes.at(-1) ?? 0 },
    quietRepairedWithinPeriod,
    quietRepairedWithinBound,
    quietDisabled,
    boundMs,
    peakPerSecond: service.peakPerSecond,
    capPerSecond: world.capPerSecond,
    ...run,
  }
}

/** What refresh ahead did: its token calls and the request path's, the busiest minute, lost. */
export async function judgeRefresh(world: World, run: RefreshRun): Promise<RefreshFigures> {
  const { service, keys, start, days } = world
  const minutes = days * 1_440
  let busiest = 0
  let total = 0
  for (let m = 0; m < minutes; m++) {
    const calls = service.tokens.byMinute.get(Math.floor(start / 60_000) + m) ?? 0
    busiest = Math.max(busiest, calls)
    total += calls
  }
  let lost = 0
  for (const key of keys) if (!(await run.live(key))) lost++
  return {
    tokenCalls: run.counts.ahead,
    requestPathRefreshes: run.counts.requestPath,
    failed: run.counts.failed,
    lost,
    busiestMinuteToMean: total === 0 ? 0 : busiest / (total / minutes),
  }
}
