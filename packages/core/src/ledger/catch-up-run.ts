// A catch-up run that can be resumed, planned without I/O. A run over many accounts takes
// hours; one stopped halfway (a deploy, a crash) is taken up again by the next call with the
// same `since`: the accounts it caught up are passed over, the others (and those that failed)
// are listed. A run that caught every account up without a problem is closed, so a later call
// starts afresh. The executor (`catch-up-progress.ts`) keeps the run and each account's last
// catch-up as checkpoints of a `SweepStore`.

/** The run under way, as kept: when it started (0: none under way), for which `since`. */
export interface CatchUpRun {
  startedAt: number
  since: number | undefined
}

/** What a call does with the run it found: takes it up, or starts one now. */
export type RunStart = { kind: 'resume'; startedAt: number } | { kind: 'fresh'; startedAt: number }

/** The checkpoints a run keeps. `since` is kept as -1 when there is none. */
export const RUN_CHECKPOINT = 'catch-up:run'
export const SINCE_CHECKPOINT = 'catch-up:run-since'
export const NO_SINCE = -1
export const accountCheckpoint = (key: string): string => `catch-up:account:${key}`

/**
 * Takes up the run found when it is under way for the same `since` (a number: without one,
 * `since` is the retention horizon, a new time each call, so no run is taken up); else starts
 * one at `now`.
 */
export function startRun(
  found: CatchUpRun | undefined,
  since: number | undefined,
  now: number,
): RunStart {
  if (found !== undefined && found.startedAt > 0 && since !== undefined && found.since === since)
    return { kind: 'resume', startedAt: found.startedAt }
  return { kind: 'fresh', startedAt: now }
}

/**
 * An account the run already caught up: its last catch-up was listed after the run started
 * (kept only when it ended without a problem). One listed in the very millisecond a run
 * started may belong to the run before: it is listed again.
 */
export const caughtUp = (startedAt: number, listedAt: number | undefined): boolean =>
  listedAt !== undefined && listedAt > startedAt

/** A run is closed when every account was caught up; with a problem left, it stays open. */
export const closes = (report: { problems: readonly unknown[] }): boolean =>
  report.problems.length === 0
