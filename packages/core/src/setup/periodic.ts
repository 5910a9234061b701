import type { CatchUpReport } from '../catch-up/options.js'
import { ConfigError } from '../errors/errors.js'
import { consoleLogger, describeError, emit, type Logger } from '../log.js'
import type { StepOptions } from '../sweep/step.js'
import type { SweepStore } from '../sweep/store.js'
import { wholeNumber } from '../validate.js'
import {
  afterStep,
  behindOf,
  nextTask,
  type PeriodicPlan,
  type PeriodicStepResult,
  startPlan,
} from './periodic-plan.js'

// The executor of `periodic-plan.ts`: one call of the app's periodic work (`runDue()`), from a
// cron, a serverless route or a timer of any cadence. It steps each task while the plan says,
// and tells how far behind it left them; falling behind is never silent: one warning when a
// call ends behind (again only after a call that caught up), and `health()` reads how far behind
// the shared checkpoints are, whichever instance ran last.

/** A call's time budget by default: inside a serverless function's usual limit. */
export const DEFAULT_BUDGET_MS = 10_000
/** How far behind a task may be before `health()` says so: past the slowest cadence (15 min). */
export const DEFAULT_MAX_BEHIND_MS = 20 * 60_000

/** One task of the periodic work: a step of a rolling schedule over the shared checkpoints. */
export interface PeriodicTask<R extends PeriodicStepResult = PeriodicStepResult> {
  /** Its name in reports and warnings: `refreshAhead`, `sweep`. */
  name: string
  /** Its checkpoints' names in the sweep store: `<checkpoint>:<shard>`. */
  checkpoint: string
  shards: number
  step(options: StepOptions): Promise<R>
}

export interface RunDueOptions {
  /**
   * The call's time budget in ms: no step starts that its task's longest would overrun; each
   * task steps once whatever the budget (0: one step of each). Default 10 000.
   */
  budgetMs?: number
}

/** One task's part of a call. */
export interface PeriodicTaskReport<R> {
  steps: number
  /** Behind after the call, in ms (0: caught up). */
  behindMs: number
  /** Its steps' reports, in order. */
  reports: R[]
}

/** What one `runDue()` call did. */
export interface PeriodicReport {
  ms: number
  budgetMs: number
  /** The most any task is behind after the call, in ms: 0 when every one caught up. */
  behindMs: number
  /** Each configured task's steps, by name. */
  tasks: Record<string, PeriodicTaskReport<PeriodicStepResult>>
  /**
   * The catch-up run this call found open and took up (one stopped halfway, or one a budget
   * left unfinished), with what was left of the budget: its report, `unfinished` when the
   * next call goes on with it. Absent when none was open.
   */
  catchUp?: CatchUpReport
}

/** A catch-up run left open, taken up by the periodic work: how to find it and go on with it. */
export interface PendingCatchUp {
  /** The open run's `since`, or undefined when none is open. */
  pending(): Promise<number | undefined>
  /** Goes on with the run for `since`, within `budgetMs`. */
  run(since: number, budgetMs: number): Promise<CatchUpReport>
}

/** Runs the app's periodic tasks within a budget; one per `Scheduling`. */
export class PeriodicWork {
  readonly #tasks: readonly PeriodicTask[]
  readonly #logger: Logger | undefined
  /** Whether the last call that ended behind was told (reset by a call that caught up). */
  #told = false

  readonly #catchUp: PendingCatchUp | undefined

  constructor(
    tasks: readonly PeriodicTask[],
    logger: Logger | undefined,
    catchUp?: PendingCatchUp,
  ) {
    this.#tasks = tasks
    this.#logger = logger
    this.#catchUp = catchUp
  }

  get configured(): boolean {
    return this.#tasks.length > 0
  }

  async run(options: RunDueOptions = {}): Promise<PeriodicReport> {
    if (typeof options !== 'object' || options === null)
      throw new ConfigError('runDue: pass an options object ({ budgetMs }), or nothing.')
    const budgetMs = wholeNumber('runDue', 'budgetMs', options.budgetMs, DEFAULT_BUDGET_MS, {
      min: 0,
      unit: 'ms',
    })
    const started = performance.now()
    let plan: PeriodicPlan = startPlan(
      this.#tasks.map((t) => t.name),
      budgetMs,
    )
    const tasks: Record<string, PeriodicTaskReport<PeriodicStepResult>> = {}
    for (const task of this.#tasks) tasks[task.name] = { steps: 0, behindMs: 0, reports: [] }
    for (;;) {
      const index = nextTask(plan, performance.now() - started)
      if (index === undefined) break
      const task = this.#tasks[index]!
      const stepStarted = performance.now()
      // A failure of an earlier step is tried again once a call: at the task's first step.
      const result = await task.step({ retry: plan.tasks[index]!.steps === 0 })
      plan = afterStep(plan, index, result, performance.now() - stepStarted)
      const part = tasks[task.name]!
      part.steps++
      part.behindMs = result.behindMs
      part.reports.push(result)
    }
    const { behindMs, by } = behindOf(plan)
    this.#tell(behindMs, by, budgetMs, plan)
    const catchUp = await this.#pendingCatchUp(budgetMs - (performance.now() - started))
    return {
      ms: Math.round(performance.now() - started),
      budgetMs,
      behindMs,
      tasks,
      ...(catchUp === undefined ? {} : { catchUp }),
    }
  }

  /**
   * The open catch-up run, gone on with for what is left of the budget (each of its listings
   * one account at least); a failure is logged, and the run stays open for the next call.
   */
  async #pendingCatchUp(leftMs: number): Promise<CatchUpReport | undefined> {
    if (this.#catchUp === undefined) return undefined
    try {
      const since = await this.#catchUp.pending()
      if (since === undefined) return undefined
      return await this.#catchUp.run(since, Math.max(0, Math.floor(leftMs)))
    } catch (error) {
      emit(
        this.#logger ?? consoleLogger,
        'warn',
        `scheduling-kit: runDue() could not go on with the open catch-up run; the next call tries again. ${describeError(error)}`,
      )
      return undefined
    }
  }

  /** One warning when a call ends behind; the next only after a call that caught up. */
  #tell(behindMs: number, by: Record<string, number>, budgetMs: number, plan: PeriodicPlan) {
    if (behindMs === 0) {
      this.#told = false
      return
    }
    if (this.#told) return
    this.#told = true
    const parts = Object.entries(by)
      .filter(([, ms]) => ms > 0)
      .map(([name, ms]) => `${name} ${describeMs(ms)}`)
    const stalled = plan.tasks.filter((t) => t.stalled).map((t) => t.name)
    emit(
      this.#logger ?? consoleLogger,
      'warn',
      `scheduling-kit: the periodic work is ${describeMs(behindMs)} behind after runDue() (${parts.join(', ')}), within its budget of ${budgetMs} ms. ` +
        'Call runDue() more often, or give it a larger budgetMs; what it could not do is the next call’s.' +
        (stalled.length > 0
          ? ` ${stalled.join(' and ')} did not get closer in its last step: another instance holds its shards, or a step takes longer than the time its window covers (raise maxStepMs or concurrency).`
          : ''),
    )
  }

  /**
   * How far behind now each task's shared checkpoints are (the furthest shard), whichever
   * instance stepped them: a shard never stepped is not behind.
   */
  async behind(store: SweepStore, now: number): Promise<Record<string, number>> {
    const by: Record<string, number> = {}
    for (const task of this.#tasks) {
      const names = Array.from({ length: task.shards }, (_, i) => `${task.checkpoint}:${i}`)
      const checkpoints = await Promise.all(names.map((name) => store.checkpoint(name)))
      let oldest: number | undefined
      for (const checkpoint of checkpoints) {
        const through = checkpoint?.through
        if (typeof through !== 'number' || !Number.isFinite(through)) continue
        oldest = oldest === undefined ? through : Math.min(oldest, through)
      }
      by[task.name] = oldest === undefined ? 0 : Math.max(0, now - oldest)
    }
    return by
  }
}

/** A duration as people read it: `850 ms`, `42 s`, `12 min`, `3.5 h`. */
export function describeMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`
  return `${Math.round(ms / 360_000) / 10} h`
}
