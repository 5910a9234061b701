import { StoreFullError } from '../errors/store.js'
import { type HealthReport, memoryHealth } from '../health/report.js'
import type { LedgerEntry, ResourceMark, StoredLedgerEntry, StoredResourceMark } from './entry.js'
import { isNewer, withoutBody } from './machine.js'
import {
  cursorOf,
  isPast,
  type LedgerFilter,
  type LedgerPage,
  type LedgerPurge,
  type LedgerStore,
  ledgerPageSize,
  listOrder,
  matches,
  readLedgerCursor,
} from './store.js'

export interface MemoryLedgerStoreOptions {
  /**
   * Most entries kept. Past it, the oldest handled ones (`done`, `stale`) make room; when none
   * is left, a new delivery is refused (`store_full`, answered 503: the service delivers it
   * again later) rather than forgetting a failed or dead one. Default 100 000.
   */
  maxEntries?: number
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

  constructor(options: MemoryLedgerStoreOptions = {}) {
    this.#max = options.maxEntries ?? 100_000
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size
  }

  health(): Promise<HealthReport> {
    return Promise.resolve(memoryHealth())
  }

  get(id: string): Promise<StoredLedgerEntry | undefined> {
    const entry = this.#entries.get(id)
    return Promise.resolve(entry === undefined ? undefined : { ...entry })
  }

  write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined> {
    const current = this.#entries.get(entry.id)
    if (current?.version !== expected) return Promise.resolve(undefined)
    if (current === undefined && this.#entries.size >= this.#max) this.#makeRoom()
    const version = (expected ?? 0) + 1
    this.#entries.set(entry.id, { ...entry, version })
    return Promise.resolve(version)
  }

  /** Drops the oldest handled entry; throws `store_full` when every entry still matters. */
  #makeRoom(): void {
    for (const [id, entry] of this.#entries) {
      if (entry.status === 'done' || entry.status === 'stale') {
        this.#entries.delete(id)
        return
      }
    }
    throw new StoreFullError('The memory ledger store', this.#max)
  }

  list(filter?: LedgerFilter): Promise<LedgerPage> {
    const cursor = readLedgerCursor(filter?.after)
    const size = ledgerPageSize(filter)
    const found = [...this.#entries.values()]
      .filter((e) => matches(e, filter) && (cursor === undefined || isPast(e, cursor)))
      .sort(listOrder)
    const entries = found.slice(0, size).map((e) => ({ ...e }))
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
      this.#marks.set(mark.resourceId, { ...mark, version: (applied?.version ?? 0) + 1 })
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
    this.#marks.set(mark.resourceId, { ...mark, version })
    return Promise.resolve(version)
  }

  purge(what: LedgerPurge): Promise<{ bodies: number; entries: number }> {
    let bodies = 0
    let entries = 0
    for (const [id, entry] of this.#entries) {
      if (what.entriesBefore !== undefined && entry.receivedAt < what.entriesBefore) {
        this.#entries.delete(id)
        entries++
        continue
      }
      if (entry.body === undefined) continue
      const expired =
        what.bodiesBefore !== undefined && (entry.bodyExpiresAt ?? 0) <= what.bodiesBefore
      if (expired || (what.account !== undefined && entry.account === what.account)) {
        this.#entries.set(id, { ...withoutBody(entry), version: entry.version + 1 })
        bodies++
      }
    }
    return Promise.resolve({ bodies, entries })
  }
}
