import { emit } from '../log.js'
import { eachOf, type StepOptions, stepCounts, stepShards } from '../sweep/step.js'
import { HealthWatch } from '../sweep/watch.js'
import type { SubscriptionExecutor } from './executor.js'
import { checkAccount, emptyReport } from './reconcile.js'
import type { SweepReport } from './reports.js'
import type { SweepSettings } from './sweep-options.js'

// The webhook sweep on the rolling schedule (`sweep/step.ts` steps the shards): of the
// accounts whose turn came, the healthy are passed over (and watched until their last delivery
// goes stale), the others listed and repaired as `reconcile` does; a check that fails is tried
// again at the next step.

/** The most failed accounts kept for the next step. */
const MAX_FAILED = 100_000

export class Sweeper {
  /** Accounts passed over as healthy, watched until their last delivery goes stale. */
  readonly #watch = new HealthWatch()
  /** Accounts whose check failed (an outage, a 5xx): checked again at the next step. */
  readonly #failed = new Set<string>()

  constructor(
    readonly x: SubscriptionExecutor,
    readonly settings: SweepSettings,
  ) {}

  /**
   * One step over the shards this instance can take. `retry: false` leaves the checks that
   * failed at earlier steps for a later step (the periodic work's steps after a call's first).
   */
  async step(options: StepOptions = {}): Promise<SweepReport> {
    const started = performance.now()
    const now = this.x.now()
    const report: SweepReport = {
      ...emptyReport(),
      shards: 0,
      busyShards: 0,
      due: 0,
      healthy: 0,
      stopped: 0,
      retried: 0,
      behindMs: 0,
    }
    await this.#stopped(now, report)
    if (options.retry !== false) await this.#again(report)
    const outcome = await stepShards(
      { ...this.settings, name: 'sweep' },
      now,
      (phases) => this.x.store.keys(phases),
      (due) => this.#run(due, now, report),
    )
    for (const name of outcome.overtaken)
      emit(
        this.x.settings.logger,
        'warn',
        `Subscriptions: the sweep's ${name} was moved by another instance meanwhile (its lease lapsed): this step's work on it may be done again.`,
      )
    Object.assign(report, stepCounts(outcome))
    report.ms = Math.round(performance.now() - started)
    return report
  }

  /**
   * The watched accounts whose last delivery went stale since: one that received a newer
   * delivery is watched on from it; one that did not has stopped delivering, and is listed now.
   */
  async #stopped(now: number, report: SweepReport): Promise<void> {
    const { lastDelivery, healthyWithin } = this.settings
    await eachOf(this.#watch.takeDue(now), this.x.settings.concurrency, async ({ key, last }) => {
      const latest = await lastDelivery?.(key).catch(() => undefined)
      if (latest !== undefined && latest > last) {
        this.#watch.watch(key, latest, latest + healthyWithin)
        return
      }
      report.stopped++
      await this.#check(key, report)
    })
  }

  /**
   * One account listed and repaired. An account another instance works on (or one that died
   * holding it) is waited for, and one whose check failed is kept for the next step: its turn
   * does not come again for a period.
   */
  async #check(key: string, report: SweepReport): Promise<void> {
    const failed = report.failed.length
    await checkAccount(this.x, key, report, this.x.settings.leaseWaitMs)
    if (report.failed.length > failed && this.#failed.size < MAX_FAILED) this.#failed.add(key)
  }

  /** The accounts whose check failed at an earlier step, checked again. */
  async #again(report: SweepReport): Promise<void> {
    const again = [...this.#failed]
    this.#failed.clear()
    report.retried += again.length
    await eachOf(again, this.x.settings.concurrency, (key) => this.#check(key, report))
  }

  /** A shard's due accounts: the healthy passed over and watched, the rest checked. */
  async #run(due: readonly string[], now: number, report: SweepReport): Promise<void> {
    const { lastDelivery, healthyWithin } = this.settings
    await eachOf(due, this.x.settings.concurrency, async (key) => {
      const last =
        lastDelivery === undefined ? undefined : await lastDelivery(key).catch(() => undefined)
      if (last !== undefined && last >= now - healthyWithin) {
        report.healthy++
        this.#watch.watch(key, last, last + healthyWithin)
        return
      }
      await this.#check(key, report)
    })
  }
}
