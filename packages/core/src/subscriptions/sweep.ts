import { newOwnerId } from '../claims/owner.js'
import { emit } from '../log.js'
import { dueIn, shardOf, slotOf, stepWindow } from '../sweep/schedule.js'
import type { SweepCheckpoint } from '../sweep/store.js'
import { HealthWatch } from '../sweep/watch.js'
import type { SubscriptionExecutor } from './executor.js'
import { checkAccount, emptyReport } from './reconcile.js'
import type { SweepReport } from './reports.js'
import type { SweepSettings } from './sweep-options.js'

// The executor of the rolling schedule (`sweep/schedule.ts`): one step takes the shards no
// other instance holds, reads each one's checkpoint, finds the accounts whose turn came since
// (one scan of the store's keys), passes over the healthy ones, checks the others as `reconcile`
// does, and moves each shard's checkpoint by compare-and-set. A step killed halfway leaves its
// checkpoint: the next holder of the shard, once the lease lapses, does its window again.

/** One shard held for this step: its lease name, checkpoint and window, its accounts due. */
interface HeldShard {
  name: string
  checkpoint: SweepCheckpoint | undefined
  from: number
  to: number
  due: string[]
}

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

  /** One step over the shards this instance can take. */
  async step(): Promise<SweepReport> {
    const started = performance.now()
    const { store, shards, leaseTtlMs } = this.settings
    const now = this.x.now()
    const owner = newOwnerId()
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
    await this.#again(report)
    const held = new Map<number, HeldShard>()
    // Starting at a shard drawn at random: instances stepping at once take different shards.
    const first = Math.floor(Math.random() * shards)
    for (let i = 0; i < shards; i++) {
      const shard = (first + i) % shards
      const name = `sweep:${shard}`
      if (!(await store.acquireLease(name, owner, leaseTtlMs))) {
        report.busyShards++
        continue
      }
      const checkpoint = await store.checkpoint(name)
      const window = stepWindow(
        checkpoint?.through,
        now,
        this.settings.periodMs,
        this.settings.maxStepMs,
      )
      held.set(shard, { name, checkpoint, ...window, due: [] })
    }
    const renew = setInterval(
      () => {
        for (const shard of held.values())
          store.acquireLease(shard.name, owner, leaseTtlMs).catch(() => {})
      },
      Math.floor(leaseTtlMs / 3),
    )
    ;(renew as { unref?: () => void }).unref?.()
    try {
      if (held.size > 0) await this.#collect(held)
      for (const shard of held.values()) {
        await this.#run(shard, now, report)
        const moved = await store.setCheckpoint(shard.name, shard.to, shard.checkpoint?.version)
        if (moved === undefined)
          emit(
            this.x.settings.logger,
            'warn',
            `Subscriptions: the sweep's ${shard.name} was moved by another instance meanwhile (its lease lapsed): this step's work on it may be done again.`,
          )
        report.shards++
        report.behindMs = Math.max(report.behindMs, now - shard.to)
      }
    } finally {
      clearInterval(renew)
      await Promise.all(
        [...held.values()].map((s) => store.releaseLease(s.name, owner).catch(() => {})),
      )
    }
    report.ms = Math.round(performance.now() - started)
    return report
  }

  /**
   * The watched accounts whose last delivery went stale since: one that received a newer
   * delivery is watched on from it; one that did not has stopped delivering, and is listed now.
   */
  async #stopped(now: number, report: SweepReport): Promise<void> {
    const { lastDelivery, healthyWithin } = this.settings
    const due = this.#watch.takeDue(now)
    let next = 0
    const worker = async () => {
      while (next < due.length) {
        const { key, last } = due[next++]!
        const latest = await lastDelivery?.(key).catch(() => undefined)
        if (latest !== undefined && latest > last) {
          this.#watch.watch(key, latest, latest + healthyWithin)
          continue
        }
        report.stopped++
        await this.#check(key, report)
      }
    }
    await Promise.all(Array.from({ length: this.x.settings.concurrency }, worker))
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
    let next = 0
    const worker = async () => {
      while (next < again.length) await this.#check(again[next++]!, report)
    }
    await Promise.all(Array.from({ length: this.x.settings.concurrency }, worker))
  }

  /** One scan of the store's keys: each held shard's accounts whose turn falls in its window. */
  async #collect(held: Map<number, HeldShard>): Promise<void> {
    const { periodMs, shards } = this.settings
    for await (const key of this.x.store.keys()) {
      const shard = held.get(shardOf(key, shards))
      if (shard !== undefined && dueIn(slotOf(key, periodMs), periodMs, shard.from, shard.to))
        shard.due.push(key)
    }
  }

  /** The shard's due accounts, `concurrency` at a time: the healthy passed over, the rest checked. */
  async #run(shard: HeldShard, now: number, report: SweepReport): Promise<void> {
    const { lastDelivery, healthyWithin } = this.settings
    report.due += shard.due.length
    let next = 0
    const worker = async () => {
      while (next < shard.due.length) {
        const key = shard.due[next++]!
        const last =
          lastDelivery === undefined ? undefined : await lastDelivery(key).catch(() => undefined)
        if (last !== undefined && last >= now - healthyWithin) {
          report.healthy++
          this.#watch.watch(key, last, last + healthyWithin)
          continue
        }
        await this.#check(key, report)
      }
    }
    await Promise.all(Array.from({ length: this.x.settings.concurrency }, worker))
  }
}
