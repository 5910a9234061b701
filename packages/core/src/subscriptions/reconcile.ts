import { isSchedulingError } from '../errors/errors.js'
import { describeError, emit, notify } from '../log.js'
import { meters } from '../telemetry/metrics.js'
import { endSpan, startSpan, within } from '../telemetry/otel.js'
import { reconciled } from '../telemetry/watched.js'
import { madeForOtherApp } from '../tokens/connection.js'
import { appOf, BUSY, type SubscriptionExecutor } from './executor.js'
import type { ReconcileAccount, ReconcileReport } from './options.js'
import { forgetRemoved, planRepair, settleRecord } from './plan.js'
import type { SubscriptionRecord } from './store.js'

// `reconcile()`: every account's webhooks checked against the service and repaired, each by
// the plan `planRepair` makes of what was seen.

/** What one account's repair did. */
export interface Repaired {
  /** The webhook that stays (kept or created); none when the account is removed. */
  keep?: string
  created: number
  deleted: number
  retired: string[]
}

/**
 * One account's repair, holding its lease: list the account, plan, act (create, retire,
 * delete), then settle the record (gone webhooks marked, expired ones dropped). Throws when a
 * deletion the plan asked for failed (the next run tries again).
 */
export async function repairAccount(
  x: SubscriptionExecutor,
  key: string,
  record: SubscriptionRecord,
  accountId: string | undefined,
  actions: string[],
): Promise<Repaired> {
  const remote = await x.list(key)
  const known = new Set(record.webhooks.map((w) => w.id))
  const strangers = [...remote.keys()].filter(
    (id) => !known.has(id) && remote.get(id)!.url === x.url,
  )
  const heldElsewhere = await x.heldElsewhere(key, strangers)
  const plan = planRepair({ record, remote, url: x.url, accountId, heldElsewhere })
  const done: Repaired = {
    keep: plan.keep,
    created: 0,
    deleted: 0,
    retired: [...plan.retire.keys()],
  }
  if (plan.create) {
    const made = await x.create(key, record, actions)
    await x.keep(key, made, accountId ?? record.accountId, (w) => plan.retire.has(w.id))
    done.keep = made.id
    done.created++
    const was = [...plan.retire].map(([id, why]) => `${id} was ${why}`).join(', ')
    actions.push(`created ${made.id}${was === '' ? '' : ` (${was})`}`)
  } else if (
    plan.retire.size > 0 ||
    (record.active && accountId !== undefined && accountId !== record.accountId)
  ) {
    await x.retire(key, new Set(plan.retire.keys()), record.active ? accountId : undefined)
    for (const [id, why] of plan.retire) actions.push(`retired ${id} (${why})`)
  }
  for (const { id, heldBy } of plan.leave)
    actions.push(`left ${id} at our url: the webhook of "${heldBy}" (the same service account)`)
  for (const d of plan.delete.filter((d) => !d.known)) actions.push(`deleted ${d.id} (${d.why})`)
  const [deleted, failed] = await x.sweep(
    key,
    plan.delete.map((d) => d.id),
  )
  done.deleted = deleted.length
  for (const id of deleted.filter((id) => known.has(id))) actions.push(`deleted ${id}`)
  await settle(x, key, remote, new Set(failed), actions)
  if (failed.length > 0)
    throw new Error(`the service did not delete ${failed.join(', ')}; the next run tries again`)
  return done
}

/** Writes what `settleRecord` decides: gone webhooks marked, expired ones dropped, a removed account forgotten. */
async function settle(
  x: SubscriptionExecutor,
  key: string,
  remote: Parameters<typeof settleRecord>[1],
  failed: ReadonlySet<string>,
  actions: string[],
): Promise<void> {
  const current = await x.store.get(key)
  if (current === undefined) return
  const now = x.now()
  const settled = settleRecord(current, remote, failed, now, x.settings.graceMs)
  if (settled === 'forget') {
    if (await x.store.delete(key, current.version)) actions.push('forgot the removed account')
  } else if (settled !== undefined) {
    await x.store.compareAndSet(key, { ...current, ...settled, updatedAt: now }, current.version)
  }
}

/**
 * Drops a removed account's webhooks past their grace period (the gone ones, or with
 * `evenLeft`, also ones left at the service), and the record once none is left.
 */
async function forget(
  x: SubscriptionExecutor,
  key: string,
  entry: ReconcileAccount,
  evenLeft: boolean,
): Promise<void> {
  const current = await x.store.get(key)
  if (current === undefined || current.active) return
  const now = x.now()
  const kept = forgetRemoved(current, now, x.settings.graceMs, evenLeft)
  if (kept === 'forget') {
    if (await x.store.delete(key, current.version)) {
      entry.actions.push('forgot the removed account')
      entry.outcome = 'removed'
    }
  } else if (kept.length !== current.webhooks.length) {
    await x.store.compareAndSet(
      key,
      { ...current, webhooks: kept, updatedAt: now },
      current.version,
    )
  }
}

/** One account of a `reconcile` run, holding its lease. */
async function reconcileAccount(
  x: SubscriptionExecutor,
  key: string,
  entry: ReconcileAccount,
  counts: { created: number; deleted: number },
): Promise<void> {
  const record = await x.store.get(key)
  if (record === undefined) return
  if (madeForOtherApp(record, appOf(x))) {
    entry.outcome = 'other_app'
    return
  }
  if (!record.active && record.webhooks.every((w) => w.gone === true)) {
    // Removed, and nothing left at the service: no API call (the tokens are gone by now).
    await forget(x, key, entry, false)
    return
  }
  let done: Repaired
  try {
    const accountId = record.active ? await x.accountOf(key) : undefined
    done = await repairAccount(x, key, record, accountId, entry.actions)
  } catch (error) {
    // A removed account without tokens: what is left at the service cannot be deleted by
    // this app; past the grace period, it is forgotten.
    if (!record.active && isSchedulingError(error) && error.code === 'not_connected')
      await forget(x, key, entry, true)
    throw error
  }
  counts.created += done.created
  counts.deleted += done.deleted
  if (entry.actions.length > 0) entry.outcome = record.active ? 'repaired' : 'removed'
}

/** Where a failed account goes in the report, by the error's code. */
function reportFailure(
  x: SubscriptionExecutor,
  report: ReconcileReport,
  entry: ReconcileAccount,
  error: unknown,
): void {
  // Checked by code: the error may come from another copy of the package.
  const code = isSchedulingError(error) ? error.code : undefined
  const { key } = entry
  if (code === 'reauthorization_required') {
    entry.outcome = 'reauthorization_required'
    report.reauthorizationRequired.push(key)
  } else if (code === 'not_connected') {
    entry.outcome = 'not_connected'
    report.notConnected.push(key)
  } else {
    entry.outcome = 'failed'
    entry.error = error
    report.failed.push(key)
    emit(
      x.settings.logger,
      code === 'invalid_options' ? 'error' : 'warn',
      code === 'invalid_options'
        ? `Subscriptions: reconcile cannot repair "${key}": a configuration error, which no run repairs until it is fixed. ${describeError(error)}`
        : `Subscriptions: reconcile could not check "${key}"; the next run tries again. ${describeError(error)}`,
    )
  }
}

const emptyReport = (): ReconcileReport => ({
  checked: 0,
  created: 0,
  deleted: 0,
  reauthorizationRequired: [],
  notConnected: [],
  busy: [],
  failed: [],
  otherApp: [],
  accounts: [],
  ms: 0,
})

/** One run over every key the store lists, `concurrency` accounts at a time. */
async function run(x: SubscriptionExecutor): Promise<ReconcileReport> {
  const started = performance.now()
  const report = emptyReport()
  const keys = x.store.keys()[Symbol.asyncIterator]()
  const worker = async () => {
    for (let next = await keys.next(); !next.done; next = await keys.next()) {
      const key = next.value
      report.checked++
      const entry: ReconcileAccount = { key, outcome: 'ok', actions: [] }
      try {
        const done = await x.withLease(key, 0, () => reconcileAccount(x, key, entry, report))
        if (done === BUSY) {
          entry.outcome = 'busy'
          report.busy.push(key)
        }
        if (entry.outcome === 'other_app') report.otherApp.push(key)
      } catch (error) {
        reportFailure(x, report, entry, error)
      }
      for (const action of entry.actions)
        emit(x.settings.logger, 'info', `Subscriptions: "${key}": ${action}.`)
      if (entry.outcome === 'repaired')
        notify(x.options.onConnectionChange, {
          type: 'webhook_repaired',
          key,
          actions: entry.actions,
        })
      report.accounts.push(entry)
    }
  }
  // A scan that could not cover the whole store ends the run with what it saw, and says so.
  const workers = Array.from({ length: x.settings.concurrency }, worker)
  const settled = await Promise.allSettled(workers)
  const scanFailure = settled.find((s) => s.status === 'rejected')
  if (scanFailure !== undefined) {
    report.incomplete = scanFailure.reason
    emit(
      x.settings.logger,
      'warn',
      `Subscriptions: reconcile could not list every account; those it missed were not checked. ${describeError(scanFailure.reason)}`,
    )
  }
  report.ms = Math.round(performance.now() - started)
  return report
}

/** The `reconcile` of one `createWebhookSubscriptions`: one run, in its span, with its metrics. */
export function reconciler(x: SubscriptionExecutor): () => Promise<ReconcileReport> {
  return async () => {
    const traced = startSpan('scheduling.subscriptions.reconcile')
    const m = meters()
    let report: ReconcileReport
    try {
      report = await within(traced, () => run(x))
    } catch (error) {
      endSpan(traced, error)
      throw error
    }
    reconciled.at = performance.now()
    endSpan(traced, undefined, {
      'scheduling.reconcile.checked': report.checked,
      'scheduling.reconcile.created': report.created,
      'scheduling.reconcile.deleted': report.deleted,
      'scheduling.reconcile.failed': report.failed.length,
      'scheduling.reconcile.busy': report.busy.length,
    })
    if (m !== undefined) {
      m.reconcileDuration.record(report.ms / 1000)
      const outcomes = new Map<string, number>()
      for (const entry of report.accounts)
        outcomes.set(entry.outcome, (outcomes.get(entry.outcome) ?? 0) + 1)
      for (const [outcome, count] of outcomes)
        m.reconcileAccounts.add(count, { 'scheduling.reconcile.outcome': outcome })
    }
    return report
  }
}
