// The plan of one call of the periodic work, without I/O: which task steps next within the
// call's time budget. Each task (refresh ahead, the webhook sweep) steps its shards a window at
// a time from the checkpoints in the shared store, so a call that steps a task until it is
// caught up takes up exactly where the last call ended, on whichever instance, whatever the
// time since. The plan gives every task one step, then the one furthest behind its next,
// while the budget holds the longest step that task took so far; a task whose step did not
// bring it closer (its shards held elsewhere, or a window smaller than the step's own time) is
// left for the next call. `periodic.ts` is the executor.

/** What the plan needs of a step's report. */
export interface PeriodicStepResult {
  /** How far behind now the task still is after the step, in ms (0: caught up). */
  behindMs: number
  /** Shards stepped here: 0 when another instance held every one. */
  shards: number
}

/** One task as the call has seen it. */
export interface TaskProgress {
  readonly name: string
  /** Steps taken in this call. */
  readonly steps: number
  /** Behind after the last step, in ms; undefined before the first. */
  readonly behindMs: number | undefined
  /** The longest step of this call, in ms. */
  readonly longestMs: number
  /** Left for the next call: its last step did not bring it closer. */
  readonly stalled: boolean
}

export interface PeriodicPlan {
  readonly budgetMs: number
  readonly tasks: readonly TaskProgress[]
}

/** The plan of a call over `names`, in the order their first steps go. */
export function startPlan(names: readonly string[], budgetMs: number): PeriodicPlan {
  return {
    budgetMs,
    tasks: names.map((name) => ({
      name,
      steps: 0,
      behindMs: undefined,
      longestMs: 0,
      stalled: false,
    })),
  }
}

/**
 * The index of the task to step next after `elapsedMs` of the call, or undefined: the call is
 * done. Each task steps once in every call, whatever the budget (none starves behind another);
 * then the task furthest behind that is not stalled, if its longest step so far still fits.
 */
export function nextTask(plan: PeriodicPlan, elapsedMs: number): number | undefined {
  const fresh = plan.tasks.findIndex((task) => task.steps === 0)
  if (fresh >= 0) return fresh
  if (elapsedMs >= plan.budgetMs) return undefined
  let next: number | undefined
  plan.tasks.forEach((task, i) => {
    if (task.stalled || !(task.behindMs! > 0)) return
    if (elapsedMs + task.longestMs > plan.budgetMs) return
    if (next === undefined || task.behindMs! > plan.tasks[next]!.behindMs!) next = i
  })
  return next
}

/** The plan after task `index` stepped for `ms` with `result`. */
export function afterStep(
  plan: PeriodicPlan,
  index: number,
  result: PeriodicStepResult,
  ms: number,
): PeriodicPlan {
  const tasks = plan.tasks.map((task, i) => {
    if (i !== index) return task
    const before = task.behindMs
    // Closer means: behind less than before (a first step has nothing to compare with, and
    // counts as closer when it held a shard).
    const closer = result.shards > 0 && (before === undefined || result.behindMs < before)
    return {
      name: task.name,
      steps: task.steps + 1,
      behindMs: result.behindMs,
      longestMs: Math.max(task.longestMs, ms),
      stalled: result.behindMs > 0 && !closer,
    }
  })
  return { budgetMs: plan.budgetMs, tasks }
}

/** How far behind the call left each task, and the most of them (0: every task caught up). */
export function behindOf(plan: PeriodicPlan): { behindMs: number; by: Record<string, number> } {
  const by: Record<string, number> = {}
  for (const task of plan.tasks) by[task.name] = task.behindMs ?? 0
  return { behindMs: Math.max(0, ...Object.values(by)), by }
}
