import type { DeliverySource, LedgerEntry, StoredLedgerEntry } from './entry.js'

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
