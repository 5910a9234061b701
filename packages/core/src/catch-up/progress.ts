import type { SweepStore } from '../sweep/store.js'
import {
  accountCheckpoint,
  type CatchUpRun,
  caughtUp,
  closedRun,
  closes,
  NO_SINCE,
  RUN_CHECKPOINT,
  SINCE_CHECKPOINT,
  startRun,
} from './run.js'

// The executor of the resumable run (`run.ts`): the run and each account's last
// catch-up kept as checkpoints of a `SweepStore` (the sweep's, shared by instances), each moved
// by compare-and-set.

/** Attempts at opening a run while other calls open one at the same time. */
const OPEN_TRIES = 3

export class CatchUpProgress {
  readonly #store: SweepStore
  readonly startedAt: number
  /** The version of the run's checkpoint this call wrote or found: closing needs it unmoved. */
  readonly #runVersion: number | undefined
  /** Each account's checkpoint version as read, for its write. */
  readonly #versions = new Map<string, number | undefined>()

  private constructor(store: SweepStore, startedAt: number, runVersion: number | undefined) {
    this.#store = store
    this.startedAt = startedAt
    this.#runVersion = runVersion
  }

  /**
   * Takes up the run under way for `since`, or starts one at `now`: the old run closed first,
   * then `since` written, then the new run's start, so a call stopped between two writes
   * leaves no run that names the wrong `since`.
   */
  static async open(
    store: SweepStore,
    since: number | undefined,
    now: number,
  ): Promise<CatchUpProgress> {
    for (let tries = 0; tries < OPEN_TRIES; tries++) {
      const [run, kept] = await Promise.all([
        store.checkpoint(RUN_CHECKPOINT),
        store.checkpoint(SINCE_CHECKPOINT),
      ])
      const found: CatchUpRun | undefined =
        run === undefined
          ? undefined
          : {
              startedAt: run.through,
              since: kept === undefined || kept.through === NO_SINCE ? undefined : kept.through,
            }
      const start = startRun(found, since, now)
      if (start.kind === 'resume') return new CatchUpProgress(store, start.startedAt, run?.version)
      const closed = await store.setCheckpoint(
        RUN_CHECKPOINT,
        closedRun(run?.through ?? 0),
        run?.version,
      )
      if (closed === undefined) continue
      const named = await store.setCheckpoint(SINCE_CHECKPOINT, since ?? NO_SINCE, kept?.version)
      if (named === undefined) continue
      const opened = await store.setCheckpoint(RUN_CHECKPOINT, start.startedAt, closed)
      if (opened === undefined) continue
      return new CatchUpProgress(store, start.startedAt, opened)
    }
    // Others kept opening runs: this one lists every account, and closes nothing.
    return new CatchUpProgress(store, now, undefined)
  }

  /** The account was caught up in this run already. A store failing here: not known, listed. */
  async caughtUp(key: string): Promise<boolean> {
    const found = await this.#store.checkpoint(accountCheckpoint(key)).catch(() => null)
    if (found === null) return false
    this.#versions.set(key, found?.version)
    return caughtUp(this.startedAt, found?.through)
  }

  /** The account was caught up without a problem: its checkpoint names this run. */
  async record(key: string): Promise<void> {
    if (!this.#versions.has(key)) return
    // A write that fails or lost a race leaves the account to be listed again on a resume.
    await this.#store
      .setCheckpoint(accountCheckpoint(key), this.startedAt, this.#versions.get(key))
      .catch(() => undefined)
  }

  /** Closes the run when every account was caught up (unless another call opened one since). */
  async close(report: { problems: readonly unknown[]; unfinished?: boolean }): Promise<void> {
    if (this.#runVersion === undefined || !closes(report)) return
    await this.#store
      .setCheckpoint(RUN_CHECKPOINT, closedRun(this.startedAt), this.#runVersion)
      .catch(() => undefined)
  }
}

/**
 * The `since` of the run under way in `store`, when one is open that a call can take up (it
 * names a time: a run without one is never taken up); undefined when none is.
 */
export async function pendingRun(store: SweepStore): Promise<number | undefined> {
  const [run, kept] = await Promise.all([
    store.checkpoint(RUN_CHECKPOINT),
    store.checkpoint(SINCE_CHECKPOINT),
  ])
  const since = kept?.through
  if (!(typeof run?.through === 'number' && run.through > 0)) return undefined
  return typeof since === 'number' && Number.isFinite(since) && since !== NO_SINCE
    ? since
    : undefined
}
