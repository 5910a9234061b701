import type { ApiWebhook } from '../api/webhooks.js'
import { isSchedulingError } from '../errors.js'
import { describeError, emit } from '../log.js'
import { meters, observed } from '../telemetry/metrics.js'
import { endSpan, startSpan, within } from '../telemetry/otel.js'
import type { ReconcileAccount, ReconcileReport } from './options.js'
import { BUSY, live, type SubscriptionWork, works } from './work.js'

// `reconcile()`: every account's webhooks checked against the service and repaired.

/** The `reconcile` of one `createWebhookSubscriptions`. */
export function reconciler(work: SubscriptionWork): () => Promise<ReconcileReport> {
  const { settings, store, url, clock, api, withLease, update, create, keep, sweep, expired } = work

  /** One account's repair, holding its lease. */
  async function repair(
    key: string,
    entry: ReconcileAccount,
    counts: { created: number; deleted: number },
  ): Promise<void> {
    const record = await store.get(key)
    if (record === undefined) return
    if (!record.active && record.webhooks.every((w) => w.gone === true)) {
      // Removed, and nothing left at the service: no API call (the tokens are gone by now).
      await forget(key, entry, false)
      return
    }
    const remote = new Map<string, ApiWebhook>()
    try {
      for await (const webhook of api(key).webhooks.list()) remote.set(webhook.id, webhook)
    } catch (error) {
      // A removed account without tokens: what is left at the service cannot be deleted by
      // this app; past the grace period, it is forgotten.
      if (!record.active && isSchedulingError(error) && error.code === 'not_connected')
        await forget(key, entry, true)
      throw error
    }
    const present = (id: string) => remote.has(id) && remote.get(id)!.state !== 'deleted'
    const known = new Set(record.webhooks.map((w) => w.id))
    // The newest live webhook that works is kept; every other live one retires, with its reason.
    const retire = new Map<string, string>()
    let keptId: string | undefined
    for (const w of live(record).sort((a, b) => b.createdAt - a.createdAt)) {
      const there = remote.get(w.id)
      if (record.active && keptId === undefined && w.url === url && works(there, url)) {
        keptId = w.id
        continue
      }
      retire.set(
        w.id,
        !record.active
          ? 'left after remove'
          : there === undefined
            ? 'missing'
            : there.state === 'disabled' || there.state === 'deleted'
              ? there.state
              : there.url !== url || w.url !== url
                ? 'at another url'
                : 'a duplicate',
      )
    }
    if (record.active && keptId === undefined) {
      const made = await create(key, known, entry.actions)
      await keep(key, made, (w) => retire.has(w.id))
      counts.created++
      const was = [...retire].map(([id, why]) => `${id} was ${why}`).join(', ')
      entry.actions.push(`created ${made.id}${was === '' ? '' : ` (${was})`}`)
    } else if (retire.size > 0) {
      const now = clock()
      await update(key, (r) => ({
        ...r,
        webhooks: r.webhooks.map((w) =>
          retire.has(w.id) && w.removedAt === undefined ? { ...w, removedAt: now } : w,
        ),
      }))
      for (const [id, why] of retire) entry.actions.push(`retired ${id} (${why})`)
    }
    // Delete: retired webhooks the service still has, and ones at our url this app does not know.
    const toDelete = record.webhooks
      .filter((w) => (w.removedAt !== undefined || retire.has(w.id)) && w.gone !== true)
      .map((w) => w.id)
      .filter(present)
    for (const [id, webhook] of remote) {
      if (!known.has(id) && webhook.url === url && webhook.state !== 'deleted') {
        toDelete.push(id)
        entry.actions.push(`deleted ${id} (at our url, unknown to this app)`)
      }
    }
    const [deleted, failed] = await sweep(key, toDelete)
    counts.deleted += deleted.length
    for (const id of deleted.filter((id) => known.has(id))) entry.actions.push(`deleted ${id}`)
    // Retired webhooks the service no longer has are gone; gone and past the grace period, forgotten.
    const now = clock()
    const current = await store.get(key)
    if (current !== undefined) {
      const webhooks = current.webhooks
        .map((w) =>
          w.removedAt !== undefined && w.gone !== true && !present(w.id) && !failed.includes(w.id)
            ? { ...w, gone: true }
            : w,
        )
        .filter((w) => !expired(w, now))
      const changed =
        webhooks.length !== current.webhooks.length ||
        webhooks.some((w, i) => w !== current.webhooks[i])
      if (!current.active && webhooks.length === 0) {
        if (await store.delete(key, current.version))
          entry.actions.push('forgot the removed account')
      } else if (changed) {
        await store.compareAndSet(key, { ...current, webhooks, updatedAt: now }, current.version)
      }
    }
    if (entry.actions.length > 0) entry.outcome = record.active ? 'repaired' : 'removed'
    if (failed.length > 0) {
      throw new Error(`the service did not delete ${failed.join(', ')}; the next run tries again`)
    }
  }

  /**
   * Drops a removed account's webhooks past their grace period (the gone ones, or with
   * `evenLeft`, also ones left at the service), and the record once none is left.
   */
  async function forget(key: string, entry: ReconcileAccount, evenLeft: boolean): Promise<void> {
    const current = await store.get(key)
    if (current === undefined || current.active) return
    const now = clock()
    const kept = current.webhooks.filter(
      (w) =>
        !(
          w.removedAt !== undefined &&
          now - w.removedAt > settings.graceMs &&
          (w.gone === true || evenLeft)
        ),
    )
    if (kept.length === 0) {
      if (await store.delete(key, current.version)) {
        entry.actions.push('forgot the removed account')
        entry.outcome = 'removed'
      }
    } else if (kept.length !== current.webhooks.length) {
      await store.compareAndSet(
        key,
        { ...current, webhooks: kept, updatedAt: now },
        current.version,
      )
    }
  }

  /** One run, in its span (`scheduling.subscriptions.reconcile`), with its metrics. */
  async function reconcile(): Promise<ReconcileReport> {
    const traced = startSpan('scheduling.subscriptions.reconcile')
    const m = meters()
    let report: ReconcileReport
    try {
      report = await within(traced, run)
    } catch (error) {
      endSpan(traced, error)
      throw error
    }
    observed.reconciledAt = performance.now()
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

  async function run(): Promise<ReconcileReport> {
    const started = performance.now()
    const report: ReconcileReport = {
      checked: 0,
      created: 0,
      deleted: 0,
      reauthorizationRequired: [],
      notConnected: [],
      busy: [],
      failed: [],
      accounts: [],
      ms: 0,
    }
    const keys = store.keys()[Symbol.asyncIterator]()
    const worker = async () => {
      for (let next = await keys.next(); !next.done; next = await keys.next()) {
        const key = next.value
        report.checked++
        const entry: ReconcileAccount = { key, outcome: 'ok', actions: [] }
        try {
          const done = await withLease(key, 0, () => repair(key, entry, report))
          if (done === BUSY) {
            entry.outcome = 'busy'
            report.busy.push(key)
          }
        } catch (error) {
          // Checked by code: the error may come from another copy of the package.
          const code = isSchedulingError(error) ? error.code : undefined
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
              settings.logger,
              code === 'invalid_options' ? 'error' : 'warn',
              code === 'invalid_options'
                ? `Subscriptions: reconcile cannot repair "${key}": a configuration error, which no run repairs until it is fixed. ${describeError(error)}`
                : `Subscriptions: reconcile could not check "${key}"; the next run tries again. ${describeError(error)}`,
            )
          }
        }
        for (const action of entry.actions)
          emit(settings.logger, 'info', `Subscriptions: "${key}": ${action}.`)
        report.accounts.push(entry)
      }
    }
    await Promise.all(Array.from({ length: settings.concurrency }, worker))
    report.ms = Math.round(performance.now() - started)
    return report
  }

  return reconcile
}
