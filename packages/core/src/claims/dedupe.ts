import { StoreFullError } from '../errors/store.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import { memoryHealth } from '../health/report.js'

/** What a claim on a delivery finds. */
export type ClaimResult = 'claimed' | 'in_progress' | 'completed'

/**
 * Remembers which payloads were handled, so a retried delivery runs its handlers once.
 *
 * Each claim is made by an `owner`, a string unique to one delivery attempt. A claim lasts a
 * lease (minutes); a holder too slow to finish within it loses the key to the next claim.
 * `complete` and `release` act only for the owner that holds the claim (or on a key nobody
 * holds), so a late holder cannot free or finish the claim of the one that took over.
 *
 * All three must be atomic for one key. `RedisDedupeStore` and `PostgresDedupeStore` dedupe
 * across processes; `runDedupeStoreConformance` in `@scheduling-kit/testing` checks your own.
 */
export interface DedupeStore {
  /**
   * Whether what the store depends on answers (see `checkHealth`), for a readiness route.
   * Optional: a store without it is left out of the handler's `health()`.
   */
  health?(options?: HealthOptions): Promise<HealthReport>
  /** Claims a key for `owner`: `claimed` when nobody holds it, else what the holder is doing. */
  claim(key: string, owner: string): Promise<ClaimResult> | ClaimResult
  /**
   * `owner` finished: later claims answer `completed` (for the completion time). A no-op when
   * another owner holds the key now.
   */
  complete(key: string, owner: string): Promise<void> | void
  /** `owner` failed: the key is free for the retry. A no-op unless `owner` holds the claim. */
  release(key: string, owner: string): Promise<void> | void
  /**
   * Optional: renews `owner`'s claim for the store's lease time from now. Called every 10
   * seconds while the handlers run (by the worker, every third of its `claimMs`), so a claim
   * cannot lapse under a live handler and can be short for a dead one. Resolves to `false`
   * when `owner` no longer holds it.
   */
  extend?(key: string, owner: string): Promise<boolean> | boolean
  /**
   * Optional: how long a completion is remembered, in ms. The handler refuses bodies older
   * than it (`maxAgeMs`); without it, 24 h.
   */
  readonly ttlMs?: number
}

/** Default of `maxEntries`: about 14 MB of heap at the 198 bytes an entry measured with payload-id keys. */
export const DEFAULT_DEDUPE_ENTRIES = 70_000

export interface MemoryDedupeStoreOptions {
  /** Most keys kept; the oldest are dropped first. Default 70 000 (about 14 MB). */
  maxEntries?: number
  /** How long a completed key is remembered. Default 24 hours. */
  ttlMs?: number
  /** How long a claim lasts if its holder never completes nor releases it. Default 5 minutes. */
  leaseMs?: number
  /**
   * What a claim of a new key does when the store holds `maxEntries` unexpired keys:
   * `'forget-oldest'` (the default) drops the oldest, and tells `onEarlyEviction`;
   * `'refuse'` drops nothing and throws `StoreFullError` (`store_full`), for keys that must
   * never be forgotten within their lifetime, such as used sign-in states.
   */
  whenFull?: 'forget-oldest' | 'refuse'
  /** Clock, for tests. */
  now?: () => number
}

/** Told when keys had to be dropped before they expired, because the store was full. */
export interface EarlyEviction {
  /** Keys dropped early by this write (1, unless `maxEntries` was lowered). */
  count: number
  maxEntries: number
}

interface Entry {
  /** The key, for the queue's slot that holds this entry. */
  key: string
  state: 'in_progress' | 'completed'
  /** Who claimed or completed it. */
  owner: string
  expiresAt: number
}

/**
 * In-process `DedupeStore`, bounded in size and time. The default of `createWebhookHandler`.
 *
 * Every write of a key appends its new entry to a FIFO queue; eviction pops from its head,
 * skipping slots whose entry is no longer the key's (written again, or released). Each write
 * adds one slot and each slot is popped once, so a delivery costs O(1) amortised, however full
 * the store is.
 *
 * @example
 * ```ts
 * const webhooks = createWebhookHandler({ secret, dedupe: new MemoryDedupeStore({ maxEntries: 100_000 }) })
 * ```
 */
export class MemoryDedupeStore implements DedupeStore {
  /** Always ready: it lives in this process (and only there). */
  health(): Promise<HealthReport> {
    return Promise.resolve(memoryHealth())
  }

  readonly #entries = new Map<string, Entry>()
  #queue: Entry[] = []
  #head = 0
  readonly #maxEntries: number
  readonly #ttlMs: number
  readonly #leaseMs: number
  readonly #now: () => number
  readonly #refuseWhenFull: boolean
  readonly #listeners: Array<(eviction: EarlyEviction) => void> = []

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_DEDUPE_ENTRIES
    this.#ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000
    this.#leaseMs = options.leaseMs ?? 5 * 60 * 1000
    this.#now = options.now ?? Date.now
    this.#refuseWhenFull = options.whenFull === 'refuse'
  }

  /** How long a completed key is remembered, in ms (option `ttlMs`). */
  get ttlMs(): number {
    return this.#ttlMs
  }

  /** Most keys kept (option `maxEntries`). */
  get maxEntries(): number {
    return this.#maxEntries
  }

  get size(): number {
    return this.#entries.size
  }

  /** Calls `listener` whenever a key is dropped before it expired because the store was full. */
  onEarlyEviction(listener: (eviction: EarlyEviction) => void): this {
    this.#listeners.push(listener)
    return this
  }

  claim(key: string, owner: string): ClaimResult {
    const now = this.#now()
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt > now) return entry.state
    if (this.#refuseWhenFull && entry === undefined && this.#entries.size >= this.#maxEntries) {
      // Only expired keys may go: if none did, the claim is refused, nothing forgotten.
      this.#evict(now, true)
      if (this.#entries.size >= this.#maxEntries) {
        throw new StoreFullError('The in-memory dedupe store', this.#maxEntries)
      }
    }
    this.#put(key, 'in_progress', owner, now + this.#leaseMs, now)
    return 'claimed'
  }

  complete(key: string, owner: string): void {
    const now = this.#now()
    const entry = this.#entries.get(key)
    if (entry === undefined || entry.expiresAt <= now) {
      this.#put(key, 'completed', owner, now + this.#ttlMs, now)
    } else if (entry.owner === owner) {
      // Completed in place: the key keeps its one queue slot, from its claim.
      entry.state = 'completed'
      entry.expiresAt = now + this.#ttlMs
    }
  }

  release(key: string, owner: string): void {
    const entry = this.#entries.get(key)
    // Its queue slots become stale and are skipped when they reach the head.
    if (entry?.owner === owner && entry.state === 'in_progress') this.#entries.delete(key)
  }

  /** Writes `key` as a new entry at the queue's tail: its older slots no longer speak for it. */
  #put(key: string, state: Entry['state'], owner: string, expiresAt: number, now: number): void {
    const entry = { key, state, owner, expiresAt }
    this.#entries.set(key, entry)
    this.#queue.push(entry)
    this.#evict(now)
  }

  /**
   * Pops the head while it is stale, expired, or (unless `expiredOnly`, or the store refuses
   * when full) the store holds more than `maxEntries`.
   */
  #evict(now: number, expiredOnly = this.#refuseWhenFull): void {
    let early = 0
    const queue = this.#queue
    while (this.#head < queue.length) {
      const slot = queue[this.#head]!
      if (this.#entries.get(slot.key) === slot) {
        const expired = slot.expiresAt <= now
        if (!expired && (expiredOnly || this.#entries.size <= this.#maxEntries)) break
        this.#entries.delete(slot.key)
        if (!expired) early++
      }
      this.#head++
    }
    // Once the popped and stale slots outnumber the store and a thousand more (claims released
    // again and again leave stale ones behind a live head), keep only the live ones: after as
    // many writes as it costs, O(1) amortised.
    if (queue.length > 2 * this.#entries.size + 1024) {
      this.#queue = queue.slice(this.#head).filter((slot) => this.#entries.get(slot.key) === slot)
      this.#head = 0
    }
    if (early > 0) {
      for (const listener of this.#listeners) {
        try {
          listener({ count: early, maxEntries: this.#maxEntries })
        } catch {
          // A failing listener must not break deduplication.
        }
      }
    }
  }
}
