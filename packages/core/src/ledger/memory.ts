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
  /** Per account, the entries that kept a body (an expired or dropped one leaves on a count). */
  readonly #kept = new Map<string, { ids: Set<string>; sweptAt: number }>()

  constructor(options: MemoryLedgerStoreOptions = {}) {
    this.#max = options.maxEntries ?? 100_000
    this.#maxBodies = maxBodiesOption('MemoryLedgerStore', options.maxBodiesPerAccount)
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
    this.#entries.set(entry.id, { ...this.#withBody(entry, current), version })
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
    if (what.account !== undefined) this.#kept.delete(what.account)
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
