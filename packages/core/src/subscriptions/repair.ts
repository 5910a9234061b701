import type { SubscriptionExecutor } from './executor.js'
import { forgetRemoved, planRepair, settleRecord } from './plan.js'
import type { ReconcileAccount } from './reports.js'
import type { SubscriptionRecord } from './store.js'

// One account's repair: list it at the service, plan (`planRepair`), act, settle the record.

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
  // A webhook made in the service account the key was connected to before (its tokens replaced
  // without `remove` first): this account's token cannot see it, nor delete it.
  for (const [id, why] of plan.retire)
    if (why.startsWith('of service account') && !remote.has(id))
      actions.push(
        `left ${id} at the service (${why}): only that account's token can delete it; its deliveries run no handlers`,
      )
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
export async function forget(
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
