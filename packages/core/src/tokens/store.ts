import { cipherOption, RecordSealer } from '../credentials/sealed.js'
import type { CredentialCipher } from '../credentials/types.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import { memoryHealth } from '../health/report.js'
import type { TokenRecord } from './record.js'

/**
 * Where tokens live: your database, Redis, a file. Three methods are required; a store that
 * implements them is safe inside one process. The optional methods make it safe across
 * processes (see the guarantees in the README):
 *
 * - `compareAndSet`: no lost update. A write based on an old read never replaces newer tokens.
 * - `acquireLease` / `releaseLease`: one refresher. Only the lease holder calls the token
 *   endpoint; other processes wait for the record it writes.
 */
export interface TokenStore {
  /**
   * Whether what the store depends on answers (see `checkHealth`), for a readiness route.
   * Optional: a store without it is left out of the handler's `health()`.
   */
  health?(options?: HealthOptions): Promise<HealthReport>
  /** The record for a key, or `undefined`. Stores with `compareAndSet` include its `version`. */
  get(key: string): Promise<TokenRecord | undefined>
  /** Writes a record unconditionally. */
  set(key: string, record: TokenRecord): Promise<void>
  /**
   * Removes a record (and its lease, if any). A store with `compareAndSet` keeps the key's
   * version going past a delete (the next record of the key takes the version after the
   * deleted one's, never 1 again): else a write based on a read of the old connection matches
   * the new one's version and replaces it (`runTokenStoreConformance` tries this).
   */
  delete(key: string): Promise<void>

  /**
   * Writes only if the stored version is still `expectedVersion` (`undefined`: no record).
   * Resolves to `true` when written; the stored version becomes one greater (after a delete,
   * one greater than the deleted record's: a key's versions never repeat). Must be atomic.
   */
  compareAndSet?(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean>
  /**
   * Deletes the record (and its lease) only if the stored version is still `expectedVersion`.
   * Resolves to `true` when deleted. Must be atomic. With it, a disconnect never deletes a
   * newer connection made meanwhile (another browser connecting the same key).
   */
  compareAndDelete?(key: string, expectedVersion: number): Promise<boolean>
  /**
   * Takes the refresh lease of a key for `ttlMs`, if nobody holds it (or the holder's expired).
   * Resolves to `true` when `owner` now holds it. Must be atomic (Redis `SET NX PX`).
   */
  acquireLease?(key: string, owner: string, ttlMs: number): Promise<boolean>
  /** Gives the lease up, only if `owner` still holds it (compare-and-delete). */
  releaseLease?(key: string, owner: string): Promise<void>
}

export interface MemoryTokenStoreOptions {
  /** Clock for lease expiry, for tests. */
  now?: () => number
  /**
   * Seals each record (`createCredentialCipher`) as the shared stores do: to try a cipher
   * set-up in tests. In one process it hides little (the cipher keeps what it opened lately).
   */
  cipher?: CredentialCipher
}

/**
 * A `TokenStore` in this process's memory, with every optional capability. Safe for one
 * process (and worker threads that reach it through one owner); tokens are lost on restart.
 *
 * @example
 * ```ts
 * const tokenStore = new MemoryTokenStore() // one process; use RedisTokenStore or PostgresTokenStore for several
 * ```
 */
export class MemoryTokenStore implements TokenStore {
  /** Always ready: it lives in this process (and only there). */
  health(): Promise<HealthReport> {
    return Promise.resolve(memoryHealth())
  }

  // A record without a cipher, its sealed JSON with one.
  readonly #records = new Map<string, { value: TokenRecord | string; version: number }>()
  readonly #leases = new Map<string, { owner: string; expiresAt: number }>()
  // The last version of each deleted key: a reconnection goes on from it, so a compare-and-set
  // or compare-and-delete based on a read from before the delete can never match again.
  readonly #deleted = new Map<string, number>()
  readonly #now: () => number
  readonly #sealer: RecordSealer<TokenRecord> | undefined

  constructor(options: MemoryTokenStoreOptions = {}) {
    this.#now = options.now ?? Date.now
    const cipher = cipherOption('MemoryTokenStore', options.cipher)
    this.#sealer = cipher === undefined ? undefined : new RecordSealer(cipher, 'token')
  }

  async get(key: string): Promise<TokenRecord | undefined> {
    const stored = this.#records.get(key)
    if (stored === undefined) return undefined
    const record =
      this.#sealer === undefined
        ? structuredClone(stored.value as TokenRecord)
        : await this.#sealer.read(key, stored.value)
    return { ...record, version: stored.version }
  }

  async set(key: string, record: TokenRecord): Promise<void> {
    this.#store(key, await this.#value(key, record))
  }

  async delete(key: string): Promise<void> {
    const stored = this.#records.get(key)
    if (stored !== undefined) this.#deleted.set(key, stored.version)
    this.#records.delete(key)
    this.#leases.delete(key)
  }

  async compareAndSet(
    key: string,
    record: TokenRecord,
    expectedVersion: number | undefined,
  ): Promise<boolean> {
    if (this.#records.get(key)?.version !== expectedVersion) return false
    const value = await this.#value(key, record)
    // Sealing awaited: the version is checked again, so the write stays atomic.
    if (this.#records.get(key)?.version !== expectedVersion) return false
    this.#store(key, value)
    return true
  }

  async compareAndDelete(key: string, expectedVersion: number): Promise<boolean> {
    if (this.#records.get(key)?.version !== expectedVersion) return false
    await this.delete(key)
    return true
  }

  async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = this.#now()
    const lease = this.#leases.get(key)
    if (lease !== undefined && lease.owner !== owner && lease.expiresAt > now) return false
    this.#leases.set(key, { owner, expiresAt: now + ttlMs })
    return true
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    if (this.#leases.get(key)?.owner === owner) this.#leases.delete(key)
  }

  async #value(key: string, record: TokenRecord): Promise<TokenRecord | string> {
    const { version: _, ...rest } = record
    return this.#sealer === undefined ? structuredClone(rest) : this.#sealer.write(key, rest)
  }

  #store(key: string, value: TokenRecord | string): void {
    const version = (this.#records.get(key)?.version ?? this.#deleted.get(key) ?? 0) + 1
    this.#deleted.delete(key)
    this.#records.set(key, { value, version })
  }
}
