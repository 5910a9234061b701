import { accountKey } from '../claims/keys.js'
import type { DeliverySource, LedgerEntry, ResourceMark, StoredLedgerEntry } from './entry.js'

// How a ledger entry moves on, as pure functions: no clock, no I/O, no store. The ledger reads
// an entry, asks these what to write and what to answer, and writes by compare-and-set; a lost
// race reads again and asks again.

/** What a delivery arriving (or a replay) comes to, given the entry the ledger holds. */
export type Arrival =
  /** Run the handlers, after writing `entry` (`processing`, under this owner's lease). */
  | { action: 'run'; entry: LedgerEntry }
  /** Handled already (or stale, or dead): answered 200, nothing runs. */
  | { action: 'skip'; status: 'done' | 'stale' | 'dead' }
  /** Another owner runs it now, within its lease: answered 409, the service tries later. */
  | { action: 'busy' }

/** A verified delivery, as the ledger first sees it. */
export type Delivery = Omit<
  LedgerEntry,
  'status' | 'attempts' | 'receivedAt' | 'updatedAt' | 'owner' | 'leaseUntil' | 'lastError'
>

/**
 * A new delivery's fields in the layout of a stored entry: every field an entry may get later
 * is there from the start, `undefined` until set (stores keep what is defined). Each later copy
 * (`{ ...entry, status }`, `{ ...entry, version }`) then replaces fields instead of adding
 * them: V8 copies an object and replaces a field in about 900 instructions, and adds one in
 * about 11,000 (callgrind, 13 fields); ten were added per delivery.
 */
export function entryLayout(
  id: string,
  payloadId: string,
  type: string,
  source: DeliverySource,
): Omit<Delivery, 'body' | 'bodyExpiresAt'> {
  const layout: StoredLedgerEntry = {
    id,
    payloadId,
    type,
    webhookId: undefined,
    account: undefined,
    resourceId: undefined,
    resourceState: undefined,
    resourceDigest: undefined,
    resourceWhen: undefined,
    occurredAt: undefined,
    listedAt: undefined,
    status: undefined as unknown as LedgerEntry['status'],
    attempts: undefined as unknown as number,
    lastError: undefined,
    source,
    receivedAt: undefined as unknown as number,
    updatedAt: undefined as unknown as number,
    body: undefined,
    bodyExpiresAt: undefined,
    bodyCapped: undefined,
    owner: undefined,
    leaseUntil: undefined,
    version: undefined as unknown as number,
  }
  return layout
}

/** A claim on an entry: by whom, when, for how long. */
export interface Claim {
  owner: string
  now: number
  leaseMs: number
}

/** The entry a delivery's first arrival writes: processing under the claim. */
export function firstArrival(delivery: Delivery, claim: Claim): LedgerEntry {
  return {
    ...delivery,
    status: 'processing',
    attempts: 1,
    receivedAt: claim.now,
    updatedAt: claim.now,
    owner: claim.owner,
    leaseUntil: claim.now + claim.leaseMs,
  }
}

/**
 * A later arrival of a recorded delivery (the service's retry): done, stale and dead entries
 * are not run again; one processing within its lease is busy; a failed one, or one whose
 * holder let its lease lapse (a process that died), runs again with one more attempt.
 */
export function arrival(entry: LedgerEntry, claim: Claim): Arrival {
  switch (entry.status) {
    case 'done':
    case 'stale':
    case 'dead':
      return { action: 'skip', status: entry.status }
    case 'processing':
    case 'received':
      if ((entry.leaseUntil ?? 0) > claim.now) return { action: 'busy' }
      return { action: 'run', entry: running(entry, claim, entry.source) }
    case 'failed':
      return { action: 'run', entry: running(entry, claim, entry.source) }
  }
}

/**
 * A replay: runs an entry that has not been handled (failed, dead, stale), unless another
 * owner runs it now within its lease. A `done` entry is not run again (the service's retry or
 * another replay may have finished it just now) unless `again` says so: a deliberate re-run.
 */
export function replayArrival(entry: LedgerEntry, claim: Claim, again = false): Arrival {
  if (
    (entry.status === 'processing' || entry.status === 'received') &&
    (entry.leaseUntil ?? 0) > claim.now
  )
    return { action: 'busy' }
  if (entry.status === 'done' && !again) return { action: 'skip', status: 'done' }
  return { action: 'run', entry: running(entry, claim, 'replay') }
}

function running(entry: LedgerEntry, claim: Claim, source: DeliverySource): LedgerEntry {
  const next: LedgerEntry = {
    ...entry,
    status: 'processing',
    attempts: entry.attempts + 1,
    source,
    updatedAt: claim.now,
    owner: claim.owner,
    leaseUntil: claim.now + claim.leaseMs,
  }
  return next
}

/** A delivery recorded and handed to a queue: `received`, its outcome the worker's to write. */
export function queuedArrival(delivery: Delivery, now: number): LedgerEntry {
  return { ...delivery, status: 'received', attempts: 0, receivedAt: now, updatedAt: now }
}

/** The lease renewed while the handlers run; `undefined` when `owner` no longer holds it. */
export function renewed(entry: LedgerEntry, claim: Claim): LedgerEntry | undefined {
  if (entry.status !== 'processing' || entry.owner !== claim.owner) return undefined
  return { ...entry, leaseUntil: claim.now + claim.leaseMs, updatedAt: claim.now }
}

/** The handlers finished: `done`. `undefined` when another owner took the entry over. */
export function finished(entry: LedgerEntry, owner: string, now: number): LedgerEntry | undefined {
  if (entry.status !== 'processing' || entry.owner !== owner) return undefined
  return {
    ...entry,
    status: 'done',
    updatedAt: now,
    owner: undefined,
    leaseUntil: undefined,
    lastError: undefined,
  }
}

/**
 * The handlers threw: `failed`, or `dead` once `maxAttempts` attempts have failed.
 * `undefined` when another owner took the entry over.
 */
export function failedWith(
  entry: LedgerEntry,
  owner: string,
  error: string,
  now: number,
  maxAttempts: number,
): LedgerEntry | undefined {
  if (entry.status !== 'processing' || entry.owner !== owner) return undefined
  return {
    ...entry,
    status: entry.attempts >= maxAttempts ? 'dead' : 'failed',
    lastError: error,
    updatedAt: now,
    owner: undefined,
    leaseUntil: undefined,
  }
}

/** The entry marked `stale` (older than its resource's mark): not run. */
export function staleEntry(entry: LedgerEntry, now: number): LedgerEntry {
  return { ...entry, status: 'stale', updatedAt: now, owner: undefined, leaseUntil: undefined }
}

/** The body dropped once its time is over; the entry stays, to answer "did we get it". */
export function withoutBody(entry: LedgerEntry): LedgerEntry {
  const { body: _body, bodyExpiresAt: _expires, ...rest } = entry
  return rest
}

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
 * The mark a delivery would set on its resource; `undefined` without a resource or a time.
 * `appliedAt` is when it is applied (set as the delivery finishes).
 */
export function markOf(entry: LedgerEntry, appliedAt?: number): ResourceMark | undefined {
  if (entry.resourceId === undefined || entry.occurredAt === undefined) return undefined
  const at = timeOf(entry.occurredAt)
  if (Number.isNaN(at)) return undefined
  const mark: ResourceMark = {
    resourceId: resourceKey(entry.account, entry.resourceId),
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
