// A catch-up run that can be resumed, planned without I/O. A run over many accounts takes
// hours; one stopped halfway (a deploy, a crash) is taken up again by the next call with the
// same `since`: the accounts it caught up are passed over, the others (and those that failed)
// are listed. Each account's checkpoint names the run that caught it up (by its start). A run that caught every account up without a problem is closed, so a later call
// starts afresh. The executor (`progress.ts`) keeps the run and each account's last
// catch-up as checkpoints of a `SweepStore`.

/**
 * The run as kept: its start (above 0 while under way; once closed, minus its start), and the
 * `since` it is for.
 */
export interface CatchUpRun {
  startedAt: number
  since: number | undefined
}

/** What a call does with the run it found: takes it up, or starts one. */
export type RunStart = { kind: 'resume'; startedAt: number } | { kind: 'fresh'; startedAt: number }

/** The checkpoints a run keeps. `since` is kept as -1 when there is none. */
export const RUN_CHECKPOINT = 'catch-up:run'
export const SINCE_CHECKPOINT = 'catch-up:run-since'
export const NO_SINCE = -1
export const accountCheckpoint = (key: string): string => `catch-up:account:${key}`

/**
 * Takes up the run found when it is under way for the same `since` (a number: without one,
 * `since` is the retention horizon, a new time each call, so no run is taken up); else starts
 * one at `now`, after any run found (a run's start names it: no two are the same).
 */
export function startRun(
  found: CatchUpRun | undefined,
  since: number | undefined,
  now: number,
): RunStart {
  if (found !== undefined && found.startedAt > 0 && since !== undefined && found.since === since)
    return { kind: 'resume', startedAt: found.startedAt }
  return { kind: 'fresh', startedAt: Math.max(now, Math.abs(found?.startedAt ?? 0) + 1) }
}

/** The run as kept once closed: its start, negated. */
export const closedRun = (startedAt: number): number => -Math.abs(startedAt)

/**
 * An account the run already caught up: its checkpoint names this run (the run's start, kept
 * when its listing ended without a problem).
 */
export const caughtUp = (startedAt: number, caughtUpIn: number | undefined): boolean =>
  caughtUpIn === startedAt

/**
 * A run is closed when every account was caught up; with a problem left, or accounts a call's
 * budget did not reach, it stays open.
 */
export const closes = (report: { problems: readonly unknown[]; unfinished?: boolean }): boolean =>
  report.problems.length === 0 && report.unfinished !== true
