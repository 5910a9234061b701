import { isSchedulingError } from '../errors/errors.js'
import { describeError, emit, notify } from '../log.js'
import { meters } from '../telemetry/metrics.js'
import { endSpan, startSpan, within } from '../telemetry/otel.js'
import { reconciled } from '../telemetry/watched.js'
import { madeForOtherApp } from '../tokens/connection.js'
import { appOf, type SubscriptionExecutor } from './executor.js'
import { BUSY } from './lease.js'
import { forget, type Repaired, repairAccount } from './repair.js'
import type { ReconcileAccount, ReconcileReport } from './reports.js'

// `reconcile()`: every account's webhooks checked against the service and repaired (`repair.ts`),
// the report of the run, its span and its metrics.

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

/**
 * One account checked at the service and repaired, under its lease, counted into `report` and
 * told; `reconcile` and the sweep run it. `waitMs`: how long to wait for the lease another
 * instance holds before the account is reported busy (`reconcile` waits none: the next run
 * checks it; a sweep waits, since its turn does not come again for a period).
 */
export async function checkAccount(
  x: SubscriptionExecutor,
  key: string,
  report: ReconcileReport,
  waitMs = 0,
): Promise<void> {
  report.checked++
  const entry: ReconcileAccount = { key, outcome: 'ok', actions: [] }
  try {
    const done = await x.withLease(key, waitMs, () => reconcileAccount(x, key, entry, report))
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

export const emptyReport = (): ReconcileReport => ({
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
    for (let next = await keys.next(); !next.done; next = await keys.next())
      await checkAccount(x, next.value, report)
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
