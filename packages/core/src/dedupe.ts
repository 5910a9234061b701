/** What a claim on a delivery finds. */
export type ClaimResult = 'claimed' | 'in_progress' | 'completed'

/**
 * Remembers which payloads were handled, so a retried delivery runs its handlers once.
 * `claim` must be atomic for one key. Implement it over Redis (`SET key NX PX`) or a database
 * unique key to dedupe across processes.
 */
export interface DedupeStore {
  /** Claims a key: `claimed` when nobody has it, else what the holder is doing. */
  claim(key: string): Promise<ClaimResult> | ClaimResult
  /** The holder finished: later claims answer `completed`. */
  complete(key: string): Promise<void> | void
  /** The holder failed: the key is free for the retry. */
  release(key: string): Promise<void> | void
}

export interface MemoryDedupeStoreOptions {
  /** Most keys kept; the oldest are dropped first. Default 10 000. */
  maxEntries?: number
  /** How long a completed key is remembered. Default 24 hours. */
  ttlMs?: number
  /** How long a claim lasts if its holder never completes nor releases it. Default 5 minutes. */
  leaseMs?: number
  /** Clock, for tests. */
  now?: () => number
}

interface Entry {
  state: 'in_progress' | 'completed'
  expiresAt: number
}

/** In-process `DedupeStore`, bounded in size and time. The default of `createWebhookHandler`. */
export class MemoryDedupeStore implements DedupeStore {
  readonly #entries = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #ttlMs: number
  readonly #leaseMs: number
  readonly #now: () => number

  constructor(options: MemoryDedupeStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000
    this.#ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000
    this.#leaseMs = options.leaseMs ?? 5 * 60 * 1000
    this.#now = options.now ?? Date.now
  }

  get size(): number {
    return this.#entries.size
  }

  claim(key: string): ClaimResult {
    const now = this.#now()
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt > now) return entry.state
    this.#put(key, { state: 'in_progress', expiresAt: now + this.#leaseMs })
    return 'claimed'
  }

  complete(key: string): void {
    this.#put(key, { state: 'completed', expiresAt: this.#now() + this.#ttlMs })
  }

  release(key: string): void {
    this.#entries.delete(key)
  }

  #put(key: string, entry: Entry): void {
    // Re-inserting keeps the map in order of last write, so the oldest entries come first.
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    const now = this.#now()
    for (const [oldKey, old] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && old.expiresAt > now) break
      this.#entries.delete(oldKey)
    }
  }
}
