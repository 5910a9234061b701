import { ConfigError } from '../errors/errors.js'
import { bytesFull, StoreFullError } from '../errors/store.js'
import { type HealthReport, memoryHealth } from '../health/report.js'
import type { LedgerEntry, ResourceMark, StoredLedgerEntry, StoredResourceMark } from './entry.js'
import { withoutBody } from './machine.js'
import { bytesOf, copyOf, definedOf, markBytesOf } from './memory-records.js'
import { isNewer } from './order.js'
import {
  cursorOf,
  isPast,
  type LedgerFilter,
  type LedgerPage,
  type LedgerPurge,
  type LedgerPurged,
  type LedgerStore,
  ledgerPageSize,
  listOrder,
  markHorizonOf,
  matches,
  maxBodiesOption,
  readLedgerCursor,
} from './store.js'

export interface MemoryLedgerStoreOptions {
  /**
   * Most entries kept. Past it, the oldest handled ones (`done`, `stale`) make room; when none
   * is left, a new delivery is refused (`store_full`, answered 503: the service delivers it
   * again later) rather than forgetting a failed or dead one. Default 100 000.
   */
  maxEntries?: number
  /**
   * The most unexpired bodies one account keeps for replay. Past it, a new delivery of that
   * account is recorded and run as always, its body not kept (`bodyCapped`). Default 10 000.
   */
  maxBodiesPerAccount?: number
  /**
   * The most bytes its entries, bodies and marks take, as counted by their long texts (a
   * body's length, an id's, a last error's) and a fixed cost per record (512). Past it, a new
   * body is not kept (`bodyCapped`), then the oldest handled entries make room, then a new
   * delivery is refused (`store_full`). A later write of an entry (its last error, at most 500
   * characters) may pass it by that much. Default 64 MiB.
   */
  maxBytes?: number
}

/**
 * A ledger in this process's memory: for tests, development and single-process apps. Its
 * entries are gone with the process; `RedisLedgerStore` and `PostgresLedgerStore` keep them
 * across restarts and instances.
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly #entries = new Map<string, StoredLedgerEntry>()
  readonly #marks = new Map<string, StoredResourceMark>()
  readonly #max: number
  readonly #maxBodies: number
  readonly #maxBytes: number
  #bytes = 0
  /** Per account, the entries that kept a body (an expired or dropped one leaves on a count). */
  readonly #kept = new Map<string, { ids: Set<string>; sweptAt: number }>()

  constructor(options: MemoryLedgerStoreOptions = {}) {
    this.#max = options.maxEntries ?? 100_000
    this.#maxBodies = maxBodiesOption('MemoryLedgerStore', options.maxBodiesPerAccount)
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024
    if (!Number.isSafeInteger(this.#maxBytes) || this.#maxBytes < 1)
      throw new ConfigError('MemoryLedgerStore: maxBytes must be a whole number, 1 or more.')
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size
  }

  /** Bytes its entries, bodies and marks take now, as `maxBytes` counts them. */
  get bytes(): number {
    return this.#bytes
  }

  health(): Promise<HealthReport> {
    return Promise.resolve(memoryHealth())
  }

  get(id: string): Promise<StoredLedgerEntry | undefined> {
    const entry = this.#entries.get(id)
    return Promise.resolve(entry === undefined ? undefined : definedOf(entry))
  }

  write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined> {
    const current = this.#entries.get(entry.id)
    if (current?.version !== expected) return Promise.resolve(undefined)
    if (current === undefined && this.#entries.size >= this.#max) this.#makeRoom()
    const version = (expected ?? 0) + 1
    let written: LedgerEntry = this.#withBody(entry, current)
    let size = bytesOf(written)
    if (current === undefined && this.#bytes + size > this.#maxBytes) {
      // Past the bytes: the body goes first, then the oldest handled entries make room.
      if (written.body !== undefined) {
        this.#kept.get(written.account ?? '')?.ids.delete(written.id)
        written = { ...withoutBody(written), bodyCapped: true }
        size = bytesOf(written)
      }
      while (this.#bytes + size > this.#maxBytes) this.#makeRoom('maxBytes')
    }
    this.#bytes += size - (current === undefined ? 0 : bytesOf(current))
    this.#entries.set(entry.id, copyOf(written, version))
    return Promise.resolve(version)
  }

  /** The entry with the body it may keep: from its first write only, within its account's count. */
  #withBody(entry: LedgerEntry, current: StoredLedgerEntry | undefined): LedgerEntry {
    if (current !== undefined) {
      // Nearly always: the body as first written, or none (no copy made).
      if (!current.bodyCapped && entry.body === current.body) return entry
      const base = current.bodyCapped
        ? { ...withoutBody(entry), bodyCapped: true as const }
        : withoutBody(entry)
      return entry.body === undefined || current.body === undefined
        ? base
        : { ...base, body: current.body, bodyExpiresAt: current.bodyExpiresAt! }
    }
    if (entry.body === undefined || entry.account === undefined) return entry
    let kept = this.#kept.get(entry.account)
    if (kept === undefined) {
      kept = { ids: new Set(), sweptAt: 0 }
      this.#kept.set(entry.account, kept)
    }
    // At the count, drop the ids whose body expired or went, at most once a second.
    if (kept.ids.size >= this.#maxBodies && entry.receivedAt - kept.sweptAt >= 1_000) {
      kept.sweptAt = entry.receivedAt
      for (const id of kept.ids) {
        const held = this.#entries.get(id)
        if (held?.body === undefined || (held.bodyExpiresAt ?? 0) <= entry.receivedAt)
          kept.ids.delete(id)
      }
    }
    if (kept.ids.size >= this.#maxBodies) return { ...withoutBody(entry), bodyCapped: true }
    kept.ids.add(entry.id)
    return entry
  }

  /** Drops the oldest handled entry; throws `store_full` when every entry still matters. */
  #makeRoom(limit: 'maxEntries' | 'maxBytes' = 'maxEntries'): void {
    for (const [id, entry] of this.#entries) {
      if (entry.status === 'done' || entry.status === 'stale') {
        this.#drop(id, entry)
        return
      }
    }
    throw limit === 'maxEntries'
      ? new StoreFullError('The memory ledger store', this.#max)
      : bytesFull('The memory ledger store', this.#maxBytes)
  }

  #drop(id: string, entry: StoredLedgerEntry): void {
    this.#entries.delete(id)
    this.#bytes -= bytesOf(entry)
  }

  #setMark(mark: StoredResourceMark, before: StoredResourceMark | undefined): void {
    this.#marks.set(mark.resourceId, mark)
    this.#bytes += markBytesOf(mark) - (before === undefined ? 0 : markBytesOf(before))
  }

  list(filter?: LedgerFilter): Promise<LedgerPage> {
    const cursor = readLedgerCursor(filter?.after)
    const size = ledgerPageSize(filter)
    const found = [...this.#entries.values()]
      .filter((e) => matches(e, filter) && (cursor === undefined || isPast(e, cursor)))
      .sort(listOrder)
    const entries = found.slice(0, size).map(definedOf)
    const page: LedgerPage = { entries }
    if (found.length > size) page.next = cursorOf(entries[entries.length - 1]!)
    return Promise.resolve(page)
  }

  async writeReadingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }> {
    const version = await this.write(entry, expected)
    const mark = this.#marks.get(resourceId)
    return { version, mark: mark === undefined ? undefined : { ...mark } }
  }

  async writeAdvancingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    mark: ResourceMark,
  ): Promise<number | undefined> {
    const version = await this.write(entry, expected)
    const applied = this.#marks.get(mark.resourceId)
    if (version !== undefined && isNewer(mark, applied))
      this.#setMark({ ...mark, version: (applied?.version ?? 0) + 1 }, applied)
    return version
  }

  mark(resourceId: string): Promise<StoredResourceMark | undefined> {
    const mark = this.#marks.get(resourceId)
    return Promise.resolve(mark === undefined ? undefined : { ...mark })
  }

  setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined> {
    const current = this.#marks.get(mark.resourceId)
    if (current?.version !== expected) return Promise.resolve(undefined)
    const version = (expected ?? 0) + 1
    this.#setMark({ ...mark, version }, current)
    return Promise.resolve(version)
  }

  purge(what: LedgerPurge): Promise<LedgerPurged> {
    let bodies = 0
    let entries = 0
    let marks = 0
    if (what.marksBefore !== undefined)
      for (const [id, mark] of this.#marks)
        if (markHorizonOf(mark) < what.marksBefore) {
          this.#marks.delete(id)
          this.#bytes -= markBytesOf(mark)
          marks++
        }
    if (what.account !== undefined) this.#kept.delete(what.account)
    for (const [id, entry] of this.#entries) {
      if (what.entriesBefore !== undefined && entry.receivedAt < what.entriesBefore) {
        this.#drop(id, entry)
        entries++
        continue
      }
      if (entry.body === undefined) continue
      const expired =
        what.bodiesBefore !== undefined && (entry.bodyExpiresAt ?? 0) <= what.bodiesBefore
      if (expired || (what.account !== undefined && entry.account === what.account)) {
        this.#entries.set(id, { ...withoutBody(entry), version: entry.version + 1 })
        this.#bytes -= entry.body.length
        bodies++
      }
    }
    return Promise.resolve({ bodies, entries, marks })
  }
}
