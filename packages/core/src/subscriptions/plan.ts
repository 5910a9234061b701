import type { ApiWebhook } from '../api/webhooks.js'
import type { SubscribedWebhook, SubscriptionRecord } from './store.js'

// What to do about one account's webhooks, as pure functions of what was observed: the stored
// record, the account's webhooks as the service lists them, the connection, and which unknown
// webhooks another key holds. No clock, no I/O: `executor.ts` observes and acts, these decide.

/** Whether the service reports a webhook working: active (or no state given) at `url`. */
export const works = (remote: ApiWebhook | undefined, url: string): boolean =>
  remote !== undefined &&
  (remote.state === undefined || remote.state === 'active') &&
  remote.url === url

/** The record's webhooks not retired. */
export const live = (record: SubscriptionRecord): SubscribedWebhook[] =>
  record.webhooks.filter((w) => w.removedAt === undefined)

/** Whether a webhook was made for another service account than `accountId` (the current one). */
export const ofOtherAccount = (w: SubscribedWebhook, accountId: string | undefined): boolean =>
  accountId !== undefined && w.accountId !== undefined && w.accountId !== accountId

/** The service account a record's webhooks should be of: the connection's, else the record's. */
const currentAccount = (o: Pick<Observed, 'record' | 'accountId'>) =>
  o.accountId ?? o.record.accountId

/** What was seen of one account, for `planRepair`. */
export interface Observed {
  record: SubscriptionRecord
  /** The account's webhooks as the service lists them, by id. */
  remote: ReadonlyMap<string, ApiWebhook>
  /** The app's delivery address. */
  url: string
  /** The service account the key's tokens are for now, when known. */
  accountId?: string
  /**
   * Webhooks at `url` this record does not know that another key's record holds (two keys
   * connected to one service account): never deleted from here.
   */
  heldElsewhere: ReadonlyMap<string, string>
}

/** A webhook to delete at the service, and why. */
export interface Deletion {
  id: string
  why: string
  /** Whether the record lists it (else it was found at our url, unknown to every key). */
  known: boolean
}

/** What to do about one account. */
export interface RepairPlan {
  /** The live webhook that works and stays. */
  keep?: string
  /** Create a webhook (the account is active and none works). */
  create: boolean
  /** Live webhooks to retire (set `removedAt`), with their reason. */
  retire: ReadonlyMap<string, string>
  /** Webhooks to delete at the service. */
  delete: Deletion[]
  /** Webhooks at our url unknown to this record that another key holds: left, and said. */
  leave: { id: string; heldBy: string }[]
}

/** Why a live webhook cannot stay. */
function retireReason(o: Observed, w: SubscribedWebhook): string {
  const { record, remote, url } = o
  if (!record.active) return 'left after remove'
  if (ofOtherAccount(w, currentAccount(o))) return `of service account ${w.accountId}`
  const there = remote.get(w.id)
  if (there === undefined) return 'missing'
  if (there.state === 'disabled' || there.state === 'deleted') return there.state
  if (there.url !== url || w.url !== url) return 'at another url'
  return 'a duplicate'
}

/**
 * The repair of one account: the newest live webhook that works stays (when the account is
 * active), every other live one retires; one is created when none works; retired webhooks the
 * service still has are deleted, and so are webhooks at our url that no key of this app holds.
 */
export function planRepair(o: Observed): RepairPlan {
  const { record, remote, url } = o
  const retire = new Map<string, string>()
  let keep: string | undefined
  for (const w of live(record).sort((a, b) => b.createdAt - a.createdAt)) {
    if (
      record.active &&
      keep === undefined &&
      w.url === url &&
      !ofOtherAccount(w, currentAccount(o)) &&
      works(remote.get(w.id), url)
    ) {
      keep = w.id
      continue
    }
    retire.set(w.id, retireReason(o, w))
  }
  const present = (id: string) => remote.has(id) && remote.get(id)!.state !== 'deleted'
  const deletions: Deletion[] = []
  // A retired webhook the service still lists is deleted, even one the record thinks gone.
  for (const w of record.webhooks) {
    if ((w.removedAt === undefined && !retire.has(w.id)) || !present(w.id)) continue
    deletions.push({ id: w.id, why: retire.get(w.id) ?? 'retired', known: true })
  }
  const known = new Set(record.webhooks.map((w) => w.id))
  const leave: { id: string; heldBy: string }[] = []
  for (const [id, webhook] of remote) {
    if (known.has(id) || webhook.url !== url || webhook.state === 'deleted') continue
    const heldBy = o.heldElsewhere.get(id)
    if (heldBy !== undefined) leave.push({ id, heldBy })
    else deletions.push({ id, why: 'at our url, unknown to this app', known: false })
  }
  return { keep, create: record.active && keep === undefined, retire, delete: deletions, leave }
}

/**
 * The record after the deletes were tried: retired webhooks the service no longer has are
 * marked gone; gone ones past the grace period are dropped. `undefined`: nothing changed.
 * `forget`: the account was removed and nothing of it is left, so its record goes.
 */
export function settleRecord(
  record: SubscriptionRecord,
  remote: ReadonlyMap<string, ApiWebhook>,
  failed: ReadonlySet<string>,
  now: number,
  graceMs: number,
): { webhooks: SubscribedWebhook[] } | 'forget' | undefined {
  const present = (id: string) => remote.has(id) && remote.get(id)!.state !== 'deleted'
  const webhooks = record.webhooks
    .map((w) =>
      w.removedAt !== undefined && w.gone !== true && !present(w.id) && !failed.has(w.id)
        ? { ...w, gone: true }
        : w,
    )
    .filter((w) => !expired(w, now, graceMs))
  if (!record.active && webhooks.length === 0) return 'forget'
  const changed =
    webhooks.length !== record.webhooks.length || webhooks.some((w, i) => w !== record.webhooks[i])
  return changed ? { webhooks } : undefined
}

/** A retired webhook the service no longer has, past its grace period: nothing left to keep. */
const expired = (w: SubscribedWebhook, now: number, graceMs: number): boolean =>
  w.removedAt !== undefined && w.gone === true && now - w.removedAt > graceMs

/**
 * A removed account's webhooks past their grace period dropped (the gone ones, or with
 * `evenLeft` also ones left at the service, which this app can no longer delete): the webhooks
 * to keep, or `forget` when none is left.
 */
export function forgetRemoved(
  record: SubscriptionRecord,
  now: number,
  graceMs: number,
  evenLeft: boolean,
): SubscribedWebhook[] | 'forget' {
  const kept = record.webhooks.filter(
    (w) =>
      !(w.removedAt !== undefined && now - w.removedAt > graceMs && (w.gone === true || evenLeft)),
  )
  return kept.length === 0 ? 'forget' : kept
}

/**
 * The webhooks `ensure` may keep without listing the account, newest first: live, at our url,
 * of the current service account. It asks the service about each in turn; the first that works
 * stays, and every other live webhook retires.
 */
export function ensureCandidates(
  record: SubscriptionRecord,
  url: string,
  accountId: string | undefined,
): SubscribedWebhook[] {
  return live(record)
    .filter((w) => w.url === url && !ofOtherAccount(w, accountId ?? record.accountId))
    .sort((a, b) => b.createdAt - a.createdAt)
}

/** Whether `ensure` must list the account before it decides (a create's answer may have been lost, or the account changed). */
export const mustList = (record: SubscriptionRecord, accountId: string | undefined): boolean =>
  record.uncertain === true ||
  (accountId !== undefined && record.accountId !== undefined && record.accountId !== accountId)
