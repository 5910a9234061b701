import {
  ClosedError,
  isSchedulingError,
  isTransientError,
  NotConnectedError,
  type OAuthError,
  ReauthorizationRequiredError,
  StaleWriteError,
  TimeoutError,
} from '../errors.js'
import { sleep } from '../http.js'
import { KeyStates } from './key-states.js'
import {
  actionFor,
  INITIAL_TOKEN_STATE,
  type TokenEvent,
  type TokenState,
  type TokenTimes,
  transition,
} from './machine.js'
import {
  type ManagerSettings,
  resolveManagerSettings,
  type TokenManagerOptions,
} from './options.js'
import type { TokenRecord, TokenSet } from './record.js'

export interface GetTokenOptions {
  /** An access token the API just refused (401): refresh, unless the stored one is already another. */
  rejectedToken?: string
}

export interface TokenManager {
  /** A valid access token for the connection `key`, refreshed first when due. */
  getAccessToken(key: string, options?: GetTokenOptions): Promise<string>
  /** The whole record, refreshed first when due. */
  getRecord(key: string, options?: GetTokenOptions): Promise<TokenRecord>
  /** The state machine's state for a key in this process. */
  state(key: string): TokenState
  /** How many keys this process remembers refresh state for (at most `2 * maxTrackedKeys`). */
  readonly trackedKeys: number
  /**
   * Graceful shutdown: refuses new calls (`ClosedError`), lets every refresh under way finish
   * and its tokens be written (a failing store write is retried until it lands), then gives the
   * leases back. Resolves when all is done, or after `timeoutMs` (default 30 000), when a write
   * that still fails is given up: call it on SIGTERM, after the HTTP server stopped taking
   * requests, and exit when it resolves.
   */
  close(options?: { timeoutMs?: number }): Promise<void>
}

/** What waiting for the refresh lease came to. */
type Lease =
  /** The store has no leases: refresh without one. */
  | { kind: 'none' }
  /** This process holds the lease until it releases it. */
  | { kind: 'held'; owner: string }
  /** Another process refreshed while this one waited: use its record. */
  | { kind: 'refreshed'; record: TokenRecord }

const DEFAULT_LIFETIME_MS = 7200 * 1000

function fingerprint(record: TokenRecord): string {
  return `${record.version ?? ''}|${record.reauthorizationRequired ? 1 : 0}|${record.accessToken}`
}

function isInvalidGrant(error: unknown): error is OAuthError {
  return (
    isSchedulingError(error) &&
    error.code === 'oauth_error' &&
    (error as OAuthError).error === 'invalid_grant'
  )
}

function emit<A extends unknown[]>(listener: ((...args: A) => void) | undefined, ...args: A): void {
  try {
    listener?.(...args)
  } catch {
    // A failing listener must not break token handling.
  }
}

/** Grows a polling pause: doubling, up to half a second. */
const backoff = (pause: number) => Math.min(pause * 2, 500)

const isTimeout = (error: unknown) => isSchedulingError(error) && error.code === 'timeout'

/** The token manager's work for all keys of this process. */
class Refresher {
  readonly keys: KeyStates
  // Settled flights are deleted: this map holds only refreshes under way.
  readonly #flights = new Map<string, Promise<TokenRecord>>()
  /** Lease releases retried after a failure: `close()` waits for them. */
  readonly #background = new Set<Promise<void>>()
  /** Set by `close()`: when store writes that keep failing are given up. */
  #closeDeadline: number | undefined

  constructor(readonly s: ManagerSettings) {
    this.keys = new KeyStates(s.maxKeys)
  }

  #times(record: TokenRecord, now: number): TokenTimes {
    const lifetime =
      record.expiresAt - (record.obtainedAt ?? record.expiresAt - DEFAULT_LIFETIME_MS)
    return {
      now,
      refreshAt: record.expiresAt - Math.max(0, lifetime) * this.s.ratio,
      expiresAt: record.expiresAt,
    }
  }

  #apply(key: string, event: TokenEvent): TokenState {
    const entry = this.keys.get(key)
    entry.state = transition(entry.state, event)
    return entry.state
  }

  /** Moves the key's state on to match a record just read (replaced, then the clock's tick). */
  #advanceTo(key: string, record: TokenRecord): TokenState {
    const now = this.s.clock()
    const print = fingerprint(record)
    const entry = this.keys.get(key)
    if (entry.seen !== print) {
      entry.seen = print
      this.#apply(key, {
        type: 'record_replaced',
        reauthorizationRequired: record.reauthorizationRequired === true,
        ...this.#times(record, now),
      })
    }
    return this.#apply(key, { type: 'tick', ...this.#times(record, now) })
  }

  /** The connection must be authorized again: moves the state there, tells the app, rejects. */
  async #fail(key: string, cause?: unknown): Promise<never> {
    this.#apply(key, { type: 'refresh_failed', reason: 'invalid_grant' })
    const error = new ReauthorizationRequiredError(key, { cause })
    emit(this.s.options.onReauthorizationRequired, key, error)
    throw error
  }

  async #read(key: string): Promise<TokenRecord> {
    const record = await this.s.store.get(key)
    if (record === undefined) {
      this.keys.delete(key)
      throw new NotConnectedError(key)
    }
    return record
  }

  /** Writes `next` over `base`: compare-and-set when the store can. Resolves to what is stored. */
  async #write(
    key: string,
    base: TokenRecord,
    next: TokenRecord,
  ): Promise<TokenRecord | undefined> {
    const { version: _, ...record } = next
    if (!this.s.hasCas) {
      await this.s.store.set(key, record)
      return record
    }
    if (await this.s.store.compareAndSet!(key, record, base.version)) {
      return { ...record, version: (base.version ?? 0) + 1 }
    }
    return undefined
  }

  /** Waits for the lease; or for the record another process writes while holding it. */
  async #takeLease(key: string, base: TokenRecord): Promise<Lease> {
    if (!this.s.hasLease) return { kind: 'none' }
    const owner = globalThis.crypto.randomUUID()
    const deadline = performance.now() + this.s.leaseWait
    for (let pause = this.s.leasePoll; ; pause = backoff(pause)) {
      if (await this.s.store.acquireLease!(key, owner, this.s.leaseTtl))
        return { kind: 'held', owner }
      await sleep(pause)
      const latest = await this.#read(key)
      if (fingerprint(latest) !== fingerprint(base)) {
        const action = actionFor(this.#advanceTo(key, latest))
        if (action === 'use') return { kind: 'refreshed', record: latest }
        if (action === 'reauthorize') return this.#fail(key)
      }
      if (performance.now() > deadline) {
        throw new TimeoutError(`Waiting for another process to refresh "${key}"`, this.s.leaseWait)
      }
      if (this.#pastCloseDeadline()) throw new ClosedError('The token manager')
    }
  }

  #pastCloseDeadline(): boolean {
    return this.#closeDeadline !== undefined && performance.now() >= this.#closeDeadline
  }

  /**
   * Runs a store call until it succeeds: with backoff, while the lease is renewed beside it.
   * For what must not be lost (new tokens that exist nowhere else); given up only once
   * `close()`'s time is out.
   */
  async #persist<T>(key: string, call: () => Promise<T>): Promise<T> {
    for (let pause = this.s.leasePoll; ; pause = Math.min(pause * 2, 1_000)) {
      try {
        return await call()
      } catch (error) {
        if (this.#pastCloseDeadline()) throw error
        emit(this.s.options.onRefreshFailed, key, error)
        await sleep(pause)
      }
    }
  }

  /** Renews a held lease every third of its time, until the returned stop is called. */
  #keepLease(key: string, owner: string): () => void {
    const timer = setInterval(() => {
      this.s.store.acquireLease!(key, owner, this.s.leaseTtl).catch(() => {})
    }, this.s.leaseRenew)
    ;(timer as { unref?: () => void }).unref?.()
    return () => clearInterval(timer)
  }

  /**
   * Gives a lease back. A failed release is retried in the background (for at most the lease's
   * time, after which it has lapsed anyway), so the key is not blocked for the whole TTL by
   * one failed call, and the callers do not wait for a store that is down.
   */
  async #release(key: string, owner: string): Promise<void> {
    const release = () => this.s.store.releaseLease!(key, owner)
    try {
      await release()
      return
    } catch {}
    const until = performance.now() + this.s.leaseTtl
    const retry = (async () => {
      for (let pause = this.s.leasePoll; performance.now() + pause < until; pause *= 2) {
        await sleep(pause)
        try {
          await release()
          return
        } catch {}
      }
    })()
    this.#background.add(retry)
    retry.finally(() => this.#background.delete(retry))
  }

  async #callRefresh(key: string, refreshToken: string): Promise<TokenSet> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.s.oauth.refresh(refreshToken, { timeoutMs: this.s.requestTimeout })
      } catch (error) {
        // A time-out may have reached the server, which spent the refresh token: sending it
        // again could revoke the grant. Only answered failures and refused connections are retried.
        if (!isTransientError(error) || isTimeout(error) || attempt >= this.s.attempts) throw error
        emit(this.s.options.onRefreshFailed, key, error)
        const delay = Math.min(this.s.maxDelay, this.s.baseDelay * 2 ** (attempt - 1))
        await sleep(delay / 2 + Math.random() * (delay / 2))
      }
    }
  }

  /** A record whose refresh token is no longer `used`: another process refreshed (or the user reconnected). */
  async #successor(key: string, latest: TokenRecord, cause: unknown): Promise<TokenRecord> {
    if (latest.reauthorizationRequired) return this.#fail(key, cause)
    this.#advanceTo(key, latest)
    return latest
  }

  /**
   * After `invalid_grant`: another process may have spent the same refresh token a moment
   * before us and not yet written what it got. Watch the store, with backoff, for at least as
   * long as a refresh takes; only if no new refresh token appears is the connection dead.
   */
  async #recoverOrFail(
    key: string,
    used: TokenRecord,
    cause: unknown,
    refreshMs: number,
  ): Promise<TokenRecord> {
    const deadline = performance.now() + Math.max(this.s.invalidGrantWait, 2 * refreshMs)
    for (let pause = this.s.leasePoll; ; pause = backoff(pause)) {
      const latest = await this.#read(key)
      if (latest.refreshToken !== used.refreshToken) return this.#successor(key, latest, cause)
      // Another process watched as long and came to the same conclusion.
      if (latest.reauthorizationRequired) return this.#fail(key, cause)
      if (performance.now() >= deadline) break
      await sleep(pause)
    }
    // Without compare-and-set the flag is never written: it could land on a record whose
    // refresh token changed between the read and the write. Each process then finds out once.
    if (!this.s.hasCas) return this.#fail(key, cause)
    for (let tries = 0; tries < 5; tries++) {
      const latest = await this.#read(key)
      if (latest.refreshToken !== used.refreshToken) return this.#successor(key, latest, cause)
      if (latest.reauthorizationRequired) return this.#fail(key, cause)
      if (await this.#write(key, latest, { ...latest, reauthorizationRequired: true }))
        return this.#fail(key, cause)
    }
    return this.#fail(key, cause)
  }

  /**
   * Stores the tokens a refresh just obtained. With a rotating server they are the only valid
   * ones: a write refused because the record was flagged meanwhile, or because something else
   * changed while it still holds the refresh token we spent, is retried on the new version.
   * A write that throws (a store blip, a restart) is retried until it lands. Only tokens from
   * elsewhere (a reconnect) win over ours. Nothing else is awaited between the token
   * endpoint's answer and this write: that is the crash window.
   */
  async #storeRefreshed(key: string, base: TokenRecord, tokens: TokenSet): Promise<TokenRecord> {
    let latest = base
    for (let tries = 0; tries < 10; tries++) {
      const next: TokenRecord = { ...latest, ...tokens }
      delete next.reauthorizationRequired
      const stored = await this.#persist(key, () => this.#write(key, latest, next))
      if (stored !== undefined) return stored
      latest = await this.#persist(key, () => this.#read(key))
      const ours = latest.reauthorizationRequired || latest.refreshToken === base.refreshToken
      if (!ours) {
        // Newer tokens from elsewhere: they win.
        if (actionFor(this.#advanceTo(key, latest)) === 'use') return latest
        throw new StaleWriteError(key)
      }
    }
    throw new StaleWriteError(key)
  }

  /** Records a successful refresh in the key's state and tells the app. */
  #refreshed(key: string, stored: TokenRecord): TokenRecord {
    const entry = this.keys.get(key)
    entry.seen = fingerprint(stored)
    entry.lastError = undefined
    this.#apply(key, { type: 'refresh_succeeded', ...this.#times(stored, this.s.clock()) })
    emit(this.s.options.onRefreshed, key, stored)
    return stored
  }

  /** Refreshes with the tokens of `current` (read under the lease). */
  async #refreshWith(
    key: string,
    current: TokenRecord,
    rejectedToken?: string,
  ): Promise<TokenRecord> {
    let tokens: TokenSet
    const started = performance.now()
    try {
      tokens = await this.#callRefresh(key, current.refreshToken)
    } catch (error) {
      if (isInvalidGrant(error))
        return this.#recoverOrFail(key, current, error, performance.now() - started)
      // Transient or unexpected: the stored tokens stay exactly as they are.
      const retryAt = this.s.clock() + this.s.maxDelay
      this.#apply(key, { type: 'refresh_failed', reason: 'transient', retryAt })
      this.keys.get(key).lastError = error
      emit(this.s.options.onRefreshFailed, key, error)
      if (this.s.clock() < current.expiresAt && current.accessToken !== rejectedToken)
        return current
      throw error
    }
    const stored = await this.#storeRefreshed(key, current, tokens)
    if (stored.refreshToken !== tokens.refreshToken) return stored
    return this.#refreshed(key, stored)
  }

  async #refresh(key: string, base: TokenRecord, rejectedToken?: string): Promise<TokenRecord> {
    this.#apply(key, { type: 'refresh_started' })
    const lease = await this.#takeLease(key, base)
    if (lease.kind === 'refreshed') return lease.record
    const stopRenewing = lease.kind === 'held' ? this.#keepLease(key, lease.owner) : undefined
    try {
      const current = await this.#read(key)
      if (current.reauthorizationRequired) return await this.#fail(key)
      if (fingerprint(current) !== fingerprint(base) && current.accessToken !== rejectedToken) {
        // Someone refreshed (or reconnected) since we looked.
        if (actionFor(this.#advanceTo(key, current)) === 'use') return current
        this.#apply(key, { type: 'refresh_started' })
      }
      return await this.#refreshWith(key, current, rejectedToken)
    } finally {
      stopRenewing?.()
      if (lease.kind === 'held') await this.#release(key, lease.owner)
    }
  }

  async close(timeoutMs = 30_000): Promise<void> {
    this.#closeDeadline ??= performance.now() + timeoutMs
    while (this.#flights.size > 0 || this.#background.size > 0) {
      await Promise.allSettled([...this.#flights.values(), ...this.#background])
    }
  }

  async getRecord(key: string, opts?: GetTokenOptions): Promise<TokenRecord> {
    if (this.#closeDeadline !== undefined) throw new ClosedError('The token manager')
    const record = await this.#read(key)
    const action = actionFor(this.#advanceTo(key, record))
    if (action === 'reauthorize') throw new ReauthorizationRequiredError(key)
    const rejected = opts?.rejectedToken !== undefined && opts.rejectedToken === record.accessToken
    if (action === 'use' && !rejected) return record
    if (action === 'hold' && !rejected) {
      if (this.s.clock() < record.expiresAt) return record
      throw (
        this.keys.peek(key)?.lastError ?? new TimeoutError(`Refreshing "${key}"`, this.s.maxDelay)
      )
    }
    let flight = this.#flights.get(key)
    if (flight === undefined) {
      flight = this.#refresh(key, record, rejected ? opts?.rejectedToken : undefined).finally(() =>
        this.#flights.delete(key),
      )
      this.#flights.set(key, flight)
    }
    return flight
  }
}

/**
 * Keeps access tokens fresh. One refresh per key at a time in this process; across processes
 * too when the store offers leases; never a write over newer tokens when it offers
 * compare-and-set; a refused refresh token is only declared dead after re-reading the store.
 *
 * @example
 * ```ts
 * const tokens = createTokenManager({ oauth: createOAuthClient(oauthOptions), store: tokenStore })
 * const api = createSchedulingClient({
 *   baseUrl: 'https://api.example.com',
 *   token: { manager: tokens, key: accountId },
 * })
 * const me = await api.me()
 * ```
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const refresher = new Refresher(resolveManagerSettings(options))
  return {
    getRecord: (key, opts) => refresher.getRecord(key, opts),
    getAccessToken: async (key, opts) => (await refresher.getRecord(key, opts)).accessToken,
    state: (key) => refresher.keys.peek(key)?.state ?? INITIAL_TOKEN_STATE,
    get trackedKeys() {
      return refresher.keys.size
    },
    close: (opts) => refresher.close(opts?.timeoutMs),
  }
}
