import { accountKey, keyInScopeOf } from '../claims/keys.js'
import type { LedgerEntry, ResourceMark } from './entry.js'

// Ordering per resource. A change's time is its `occurred_at`; deliveries of one resource at
// the same instant are ordered by what their type does to it: a cancellation ends what a
// creation began, so a late `event.created` never undoes an `event.canceled`.

const RANKS: Readonly<Record<string, number>> = {
  'event.requested': 0,
  'event.created': 1,
  'event.checkout.pending': 1,
  'event.approved': 2,
  'event.changed': 3,
  'event.rescheduled': 3,
  'event.attendee.added': 3,
  'event.attendee.rescheduled': 3,
  'event.attendee.canceled': 3,
  'event.checkout.completed': 3,
  'event.checkout.expired': 4,
  'event.declined': 4,
  'event.canceled': 5,
}

/** The precedence of a type among deliveries of one resource at the same instant. */
export function precedenceOf(type: string): number {
  return RANKS[type] ?? 3
}

/**
 * The key a resource's mark and hold are kept under: the Event's id, under the account when
 * the delivery has one. Two accounts that both see one Event each have their own order, and
 * one account's missed change is not hidden by the other's.
 */
export function resourceKey(account: string | undefined, resourceId: string): string {
  return account === undefined ? resourceId : accountKey(account, resourceId)
}

/**
 * The key of a recorded delivery's resource: the Event's id under the delivery's scope (its
 * account, else the identity of its webhook's secret), so the mark, the hold and the entry of one
 * delivery are kept together by a store that keeps a scope together.
 */
export const resourceKeyOf = (entry: Pick<LedgerEntry, 'account' | 'id'>, resourceId: string) =>
  keyInScopeOf(entry, resourceId)

/**
 * The mark a delivery would set on its resource; `undefined` without a resource or a time.
 * `appliedAt` is when it is applied (set as the delivery finishes).
 */
export function markOf(entry: LedgerEntry, appliedAt?: number): ResourceMark | undefined {
  if (entry.resourceId === undefined || entry.occurredAt === undefined) return undefined
  const at = timeOf(entry.occurredAt)
  if (Number.isNaN(at)) return undefined
  const mark: ResourceMark = {
    resourceId: resourceKeyOf(entry, entry.resourceId),
    at,
    rank: precedenceOf(entry.type),
    by: entry.id,
  }
  if (entry.resourceState !== undefined) mark.state = entry.resourceState
  if (entry.resourceDigest !== undefined) mark.digest = entry.resourceDigest
  if (entry.resourceWhen !== undefined) mark.when = entry.resourceWhen
  if (appliedAt !== undefined) mark.appliedAt = appliedAt
  if (entry.source === 'catch-up' && entry.listedAt !== undefined) mark.listedAt = entry.listedAt
  else if (last.coarse) mark.coarse = true
  return mark
}

/** An ISO time with a fraction of a second (`.123Z`); without one, it names a whole second. */
const FRACTION = /\.\d+(?:Z|[+-]\d\d:?\d\d)?$/

/**
 * The last time read (a delivery's mark is asked for several times as it moves on): its text,
 * its milliseconds, and whether it names a whole second. A cache of one, of a pure function.
 */
const last = { text: '', at: Number.NaN, coarse: false }

function timeOf(text: string): number {
  if (text !== last.text) {
    last.text = text
    last.at = Date.parse(text)
    last.coarse = !FRACTION.test(text)
  }
  return last.at
}

/**
 * What the ordering guard makes of a delivery, given its resource's last applied mark:
 * - a service delivery runs when it is newer than the mark (`isNewer`), else it is stale;
 * - a catch-up delivery (it has `listedAt`) runs only when nothing was applied to the resource
 *   since its listing began, and what it lists differs from what was applied.
 * A delivery that runs without being later in time than the mark (a catch-up after a change
 * stamped later, a change stamped to the second within its listing's second) takes the mark's
 * place in time, so the store moves the mark on to it.
 */
export function ordered(
  entry: LedgerEntry,
  applied: ResourceMark | undefined,
): { action: 'run'; mark?: ResourceMark } | { action: 'stale' } {
  const mark = markOf(entry)
  if (mark === undefined || applied === undefined || applied.by === mark.by)
    return { action: 'run' }
  if (entry.listedAt !== undefined && entry.source === 'catch-up') {
    if ((applied.appliedAt ?? 0) >= entry.listedAt) return { action: 'stale' }
    if (applied.digest !== undefined && applied.digest === mark.digest) return { action: 'stale' }
  } else if (!isNewer(mark, applied)) return { action: 'stale' }
  if (mark.at > applied.at || (mark.at === applied.at && mark.rank >= applied.rank))
    return { action: 'run' }
  return {
    action: 'run',
    mark: { ...mark, at: applied.at, rank: Math.max(mark.rank, applied.rank) },
  }
}

/**
 * Whether `mark` (a delivery's) comes after `applied` (the resource's last): a later time, or
 * the same time and a higher precedence, or the same delivery again (a replay of the last).
 * Against a catch-up's mark (its listing's time, to the millisecond), a time the service gave
 * to the second stands for that whole second, and the listing's own millisecond counts as after
 * it: a change made while the listing ran is never taken for one it showed.
 */
export function isNewer(mark: ResourceMark, applied: ResourceMark | undefined): boolean {
  if (applied === undefined || mark.by === applied.by) return true
  const at = mark.coarse === true && applied.listedAt !== undefined ? mark.at + 999 : mark.at
  if (at !== applied.at) return at > applied.at
  // At a listing's very millisecond the change may have been made after the listing was read:
  // it is applied (again, at worst), never taken for one the listing showed.
  return applied.listedAt !== undefined || mark.rank >= applied.rank
}
