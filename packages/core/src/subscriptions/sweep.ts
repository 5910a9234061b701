import { emit } from '../log.js'
import {
  askedWaitMs,
  isRetryStore,
  MemoryRetries,
  nextTryAt,
  type RetryStore,
} from '../sweep/retries.js'
import { eachOf, type StepOptions, stepCounts, stepShards } from '../sweep/step.js'
import { HealthWatch } from '../sweep/watch.js'
import type { SubscriptionExecutor } from './executor.js'
import { checkAccount, emptyReport } from './reconcile.js'
import type { SweepReport } from './reports.js'
import type { SweepSettings } from './sweep-options.js'

// The webhook sweep on the rolling schedule (`sweep/step.ts` steps the shards): of the
// accounts whose turn came, the healthy are passed over (and watched until their last delivery
// goes stale), the others listed and repaired as `reconcile` does; a check that fails waits
// for its next try in the sweep's store (`sweep/retries.ts`), backing off per account.

/** The held checks' task name in the store. */
const RETRIES = 'sweep'
/** The most held checks a step takes (the earliest due first); the rest wait for the next. */
const RETRIES_PER_STEP = 1_000

export class Sweeper {
  /** Accounts passed over as healthy, watched until their last delivery goes stale. */
  readonly #watch = new HealthWatch()
  /** Where failed checks wait for their next try: the sweep store's, or this process's. */
  readonly #retries: RetryStore

  constructor(
    readonly x: SubscriptionExecutor,
    readonly settings: SweepSettings,
  ) {
    this.#retries = isRetryStore(settings.store) ? settings.store : new MemoryRetries()
  }

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
    if (options.retry !== false) await this.#again(now, report)
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
      await this.#check(key, now, report)
    })
  }

  /**
   * One account listed and repaired. An account another instance works on (or one that died
   * holding it) is waited for, and one whose check failed waits for its next try in the store
   * (`failed`: the failures in a row before this one): a step of the schedule later after the
   * first failure, twelve after each further one, never before the service's `Retry-After`.
   * Its turn does not come again for a period.
   */
  async #check(key: string, now: number, report: SweepReport, failed?: number): Promise<void> {
    const before = report.failed.length
    await checkAccount(this.x, key, report, this.x.settings.leaseWaitMs)
    if (report.failed.length === before) {
      if (failed !== undefined) await this.#retries.dropRetry(RETRIES, key)
      return
    }
    // This check's entry: the last one of the key (a step may check a key twice).
    const error = [...report.accounts].reverse().find((a) => a.key === key)?.error
    const failures = (failed ?? (await this.#retries.heldRetry(RETRIES, key))?.failures ?? 0) + 1
    const at = nextTryAt(now, failures, 20 * this.settings.maxStepMs, askedWaitMs(error))
    await this.#retries.holdRetry(RETRIES, key, at, failures)
  }

  /** The accounts whose held check came due, checked again. */
  async #again(now: number, report: SweepReport): Promise<void> {
    const again = await this.#retries.takeRetries(
      RETRIES,
      now,
      RETRIES_PER_STEP,
      this.settings.leaseTtlMs,
    )
    report.retried += again.length
    await eachOf(again, this.x.settings.concurrency, (t) =>
      this.#check(t.key, now, report, t.failures),
    )
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
      await this.#check(key, now, report)
    })
  }
}
