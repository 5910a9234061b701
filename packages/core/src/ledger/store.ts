import { ConfigError } from '../errors/errors.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type {
  DeliveryStatus,
  LedgerEntry,
  ResourceMark,
  StoredLedgerEntry,
  StoredResourceMark,
} from './entry.js'

// What a ledger store keeps and how: entries and resource marks, each written by
// compare-and-set on its version, listed newest first in cursor pages. Every write is one
// round trip on a store across processes. `runLedgerStoreConformance` in
// `@scheduling-kit/testing` checks a store of your own.

/** Which entries `list` answers, and which page. */
export interface LedgerFilter {
  /** One status or several. */
  status?: DeliveryStatus | readonly DeliveryStatus[]
  /** The event type, exactly. */
  type?: string
  /** The connected account's key. */
  account?: string
  /** Entries first recorded at or after this time (ms since the epoch, or a `Date`). */
  since?: number | Date
  /** Entries first recorded before this time. */
  until?: number | Date
  /** Entries per page: default 100, at most 1 000. */
  limit?: number
  /** The `next` cursor of the page before. */
  after?: string
}

/** One page of entries, newest first. */
export interface LedgerPage {
  entries: StoredLedgerEntry[]
  /** The cursor of the next page; absent on the last. */
  next?: string
}

/** What `purge` drops. */
export interface LedgerPurge {
  /** Bodies whose `bodyExpiresAt` is at or before this time. */
  bodiesBefore?: number
  /** Whole entries first recorded before this time. */
  entriesBefore?: number
  /** Every body of this account (a disconnect, a request to erase). */
  account?: string
  /**
   * Marks whose `markHorizonOf` is before this time: Events nothing was applied to since, and
   * that ended before it (or name no end).
   */
  marksBefore?: number
}

/** What `purge` dropped. */
export interface LedgerPurged {
  bodies: number
  entries: number
  /** Resource marks (a store that keeps none past retention may leave it out). */
  marks?: number
}

/**
 * The time a mark's retention runs from: when a delivery was last applied to its Event (its
 * `appliedAt`, else its `at`), or the Event's end (`end_at` in its `when`) when that is later.
 * An Event booked months ahead keeps its mark until it has ended; `catchUp` by default lists
 * nothing that ended before the same horizon, so a purged mark never makes an old Event look new.
 */
export function markHorizonOf(mark: ResourceMark): number {
  const applied = mark.appliedAt ?? mark.at
  const slash = mark.when?.indexOf('/') ?? -1
  const end = slash < 0 ? Number.NaN : Date.parse(mark.when!.slice(slash + 1))
  return Number.isFinite(end) && end > applied ? end : applied
}

/**
 * Where a delivery's entries are kept. An entry's `id` names its scope when it has one: its
 * account (`accountKey(account, payloadId)`), else, for a secret lookup's delivery, its
 * webhook's identity (`identityKey`); a mark's `resourceId` likewise. A store may keep each
 * scope's entries, marks and holds together by it (`scopeOfKey`: the Redis store's shards do).
 */
export interface LedgerStore {
  /** Whether what the store depends on answers, for a readiness route. */
  health?(options?: HealthOptions): Promise<HealthReport>
  get(id: string): Promise<StoredLedgerEntry | undefined>
  /**
   * Writes `entry` when the stored version is `expected` (`undefined`: only when there is no
   * entry). Resolves to the new version, or `undefined` when another write came first.
   *
   * A body is kept from an entry's first write only: a later write keeps the stored body, or
   * drops it when it has none, never sets one. A first write keeps it only while the entry's
   * account keeps fewer unexpired bodies than the store's `maxBodiesPerAccount`; past it the
   * entry is written without it and read back with `bodyCapped: true`.
   *
   * The ledger gives entries with every field present, `undefined` where it is not set (and a
   * `version` the store ignores): a field set to `undefined` is absent, and is read back so.
   */
  write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined>
  /** Entries matching the filter, newest first (by first recording, then id). */
  list(filter?: LedgerFilter): Promise<LedgerPage>
  /** The mark of the last delivery applied to a resource. */
  mark(resourceId: string): Promise<StoredResourceMark | undefined>
  /** Writes a resource's mark by compare-and-set, as `write` does entries. */
  setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined>
  /** Drops bodies, entries and marks; resolves to how many of each. */
  purge(what: LedgerPurge): Promise<LedgerPurged>
  /**
   * Optional, for a store several processes share: the hold that runs one delivery of a
   * resource (an Event) at a time across them. Takes it for `owner` until `until` when no other
   * owner holds it past `now` (the owner holding it renews it); with `until` 0, releases it when
   * `owner` holds it. Resolves to whether `owner` holds it now. Without it, deliveries of one
   * Event run one at a time within each process only.
   */
  holdResource?(resourceId: string, owner: string, until: number, now: number): Promise<boolean>
  /**
   * Optional, one round trip instead of two: `write`, then the mark of `resourceId` read in
   * the same round trip. The ledger uses it, when a store has it, as a delivery starts.
   */
  writeReadingMark?(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }>
  /**
   * Optional, one round trip instead of three: `write`, and when it lands, the resource's mark
   * moved on to `mark` in the same atomic step unless the mark there is newer (a later time,
   * or the same time and a higher rank, and not `mark.by`'s own). Used as a delivery finishes.
   */
  writeAdvancingMark?(
    entry: LedgerEntry,
    expected: number | undefined,
    mark: ResourceMark,
  ): Promise<number | undefined>
}

/** Default of the stores' `maxBodiesPerAccount`. */
export const DEFAULT_BODIES_PER_ACCOUNT = 10_000

/** A store's `maxBodiesPerAccount`, checked: a positive whole number, default 10 000. */
export function maxBodiesOption(store: string, value: number | undefined): number {
  if (value === undefined) return DEFAULT_BODIES_PER_ACCOUNT
  if (!Number.isSafeInteger(value) || value < 1)
    throw new ConfigError(`${store}: maxBodiesPerAccount must be a whole number, 1 or more.`)
  return value
}

/** Every status an entry can have. */
export const DELIVERY_STATUSES: ReadonlySet<DeliveryStatus> = new Set<DeliveryStatus>([
  'received',
  'processing',
  'done',
  'failed',
  'dead',
  'stale',
])

/** The most entries a page holds. */
export const MAX_PAGE = 1_000
export const DEFAULT_PAGE = 100

/** A filter's time as ms since the epoch. */
export const ledgerTimeOf = (time: number | Date | undefined): number | undefined =>
  time instanceof Date ? time.getTime() : time

/** The page size a filter asks for, within bounds. */
export function ledgerPageSize(filter: LedgerFilter | undefined): number {
  const limit = filter?.limit ?? DEFAULT_PAGE
  return Number.isInteger(limit) && limit > 0 ? Math.min(limit, MAX_PAGE) : DEFAULT_PAGE
}

/** The cursor after an entry: its first recording and its id. */
export const cursorOf = (entry: LedgerEntry): string => `${entry.receivedAt}.${entry.id}`

/** A cursor read back; `undefined` when it is not one. */
export function readLedgerCursor(
  cursor: string | undefined,
): { at: number; id: string } | undefined {
  if (cursor === undefined) return undefined
  const dot = cursor.indexOf('.')
  const at = Number(cursor.slice(0, dot))
  if (dot < 1 || !Number.isSafeInteger(at)) return undefined
  return { at, id: cursor.slice(dot + 1) }
}

/** Whether an entry matches a filter (the cursor aside). */
export function matches(entry: LedgerEntry, filter: LedgerFilter | undefined): boolean {
  if (filter === undefined) return true
  const { status, type, account } = filter
  if (status !== undefined) {
    if (typeof status === 'string' ? entry.status !== status : !status.includes(entry.status))
      return false
  }
  if (type !== undefined && entry.type !== type) return false
  if (account !== undefined && entry.account !== account) return false
  const since = ledgerTimeOf(filter.since)
  const until = ledgerTimeOf(filter.until)
  if (since !== undefined && entry.receivedAt < since) return false
  if (until !== undefined && entry.receivedAt >= until) return false
  return true
}

/** Whether an entry lists after a cursor (newest first, then the greater id first). */
export function isPast(entry: LedgerEntry, cursor: { at: number; id: string }): boolean {
  return entry.receivedAt !== cursor.at ? entry.receivedAt < cursor.at : entry.id < cursor.id
}

/** List order: newest first, then the greater id first. */
export function listOrder(a: LedgerEntry, b: LedgerEntry): number {
  if (a.receivedAt !== b.receivedAt) return b.receivedAt - a.receivedAt
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}
