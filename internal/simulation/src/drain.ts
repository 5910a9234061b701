// A task stepped as a `runDue()` call steps it: until caught up, or its shards held elsewhere.

/**
 * One step, or (`drain`) steps until the task is caught up or its shards are held elsewhere, as
 * a `runDue()` call steps it (the first with the held tries, the rest without).
 */
export async function untilCaughtUp<R extends { behindMs: number; shards: number }>(
  drain: boolean,
  step: (first: boolean) => Promise<R>,
): Promise<R[]> {
  const reports = [await step(true)]
  while (drain && reports.length < 1_000) {
    const last = reports[reports.length - 1]!
    if (last.behindMs === 0 || last.shards === 0) break
    reports.push(await step(false))
  }
  return reports
}
