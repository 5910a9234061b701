import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  afterStep,
  behindOf,
  nextTask,
  type PeriodicPlan,
  startPlan,
} from '../../src/setup/periodic-plan.js'

// The plan of one call of the periodic work, driven by a model of its tasks: each step covers a
// window of the schedule and takes some time, during which the schedule's "now" moves on; a
// task whose shards another instance holds steps nowhere.

interface ModelTask {
  behindMs: number
  /** The schedule a step covers, in ms. */
  windowMs: number
  /** How long each of its steps takes, in turn (the last repeats). */
  stepMs: number[]
  /** Another instance holds every shard. */
  held: boolean
}

const tasks = fc.array(
  fc.record({
    behindMs: fc.nat({ max: 5_000_000 }),
    windowMs: fc.integer({ min: 1_000, max: 600_000 }),
    stepMs: fc.array(fc.integer({ min: 1, max: 3_000 }), { minLength: 1, maxLength: 6 }),
    held: fc.boolean(),
  }),
  { minLength: 1, maxLength: 3 },
)

/** Runs a call of the plan over the model; what each step saw, and the plan at the end. */
function call(model: ModelTask[], budgetMs: number) {
  let plan: PeriodicPlan = startPlan(
    model.map((_, i) => `task${i}`),
    budgetMs,
  )
  const behind = model.map((t) => t.behindMs)
  const steps: { index: number; startedAt: number; longestBefore: number; first: boolean }[] = []
  let elapsed = 0
  for (let guard = 0; guard < 100_000; guard++) {
    const index = nextTask(plan, elapsed)
    if (index === undefined) return { plan, steps, elapsed, behind }
    const task = model[index]!
    const own = steps.filter((s) => s.index === index).length
    steps.push({
      index,
      startedAt: elapsed,
      longestBefore: plan.tasks[index]!.longestMs,
      first: own === 0,
    })
    const ms = task.stepMs[Math.min(own, task.stepMs.length - 1)]!
    elapsed += ms
    // The schedule's now moves on while the step runs; the step covers its window.
    if (!task.held) behind[index] = Math.max(0, behind[index]! + ms - task.windowMs)
    else behind[index] = behind[index]! + ms
    plan = afterStep(plan, index, { behindMs: behind[index]!, shards: task.held ? 0 : 1 }, ms)
  }
  throw new Error('the plan never ended')
}

describe('the plan of one call of the periodic work', () => {
  it('property: every task steps at least once; no later step starts that its longest step so far would take past the budget; the call ends', () => {
    fc.assert(
      fc.property(tasks, fc.nat({ max: 20_000 }), (model, budgetMs) => {
        const { steps } = call(model, budgetMs)
        for (let i = 0; i < model.length; i++) expect(steps.some((s) => s.index === i)).toBe(true)
        for (const step of steps.filter((s) => !s.first)) {
          expect(step.startedAt + step.longestBefore).toBeLessThanOrEqual(budgetMs)
        }
        // First steps come first, in the order given.
        expect(steps.slice(0, model.length).map((s) => s.index)).toEqual(model.map((_, i) => i))
      }),
      { numRuns: 500 },
    )
  })

  it('property: with the budget to spare, every task its own instance can step is caught up; one whose shards are held elsewhere steps once', () => {
    fc.assert(
      fc.property(tasks, (model) => {
        // Steps at most half their windows: each step brings its task closer.
        const fast = model.map((t) => ({
          ...t,
          stepMs: t.stepMs.map((ms) => Math.min(ms, Math.floor(t.windowMs / 2))),
        }))
        const { plan, steps } = call(fast, Number.MAX_SAFE_INTEGER)
        fast.forEach((task, i) => {
          const own = steps.filter((s) => s.index === i).length
          if (task.held) {
            expect(own).toBe(1)
            expect(plan.tasks[i]!.stalled).toBe(task.behindMs + task.stepMs[0]! > 0)
          } else {
            expect(plan.tasks[i]!.behindMs).toBe(0)
            // Each step covers at least half a window net: at most twice the windows behind.
            expect(own).toBeLessThanOrEqual(Math.ceil((2 * task.behindMs) / task.windowMs) + 1)
          }
        })
        const { behindMs, by } = behindOf(plan)
        expect(behindMs).toBe(Math.max(0, ...Object.values(by)))
      }),
      { numRuns: 500 },
    )
  })

  it('property: a task whose step takes longer than its window stops after the step that did not bring it closer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1_000, max: 100_000 }),
        fc.integer({ min: 1, max: 1000 }),
        (behindMs, windowMs, extra) => {
          const model = [{ behindMs, windowMs, stepMs: [windowMs + extra], held: false }]
          const { steps, plan } = call(model, Number.MAX_SAFE_INTEGER)
          expect(steps).toHaveLength(2) // the first step, and the one that found it no closer
          expect(plan.tasks[0]!.stalled).toBe(true)
        },
      ),
    )
  })

  it('the task furthest behind steps next', () => {
    let plan = startPlan(['a', 'b'], 10_000)
    plan = afterStep(plan, nextTask(plan, 0)!, { behindMs: 100, shards: 1 }, 5)
    plan = afterStep(plan, nextTask(plan, 5)!, { behindMs: 900, shards: 1 }, 5)
    expect(nextTask(plan, 10)).toBe(1)
    plan = afterStep(plan, 1, { behindMs: 50, shards: 1 }, 5)
    expect(nextTask(plan, 15)).toBe(0)
    // Past the budget: done, whoever is behind.
    expect(nextTask(plan, 10_000)).toBeUndefined()
  })
})
