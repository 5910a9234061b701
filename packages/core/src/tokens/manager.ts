import {
  ConfigError,
  isSchedulingError,
  isTransientError,
  NotConnectedError,
  type OAuthError,
  ReauthorizationRequiredError,
  StaleWriteError,
  TimeoutError,
} from '../errors.js'
import { sleep } from '../http.js'
import type { OAuthClient } from '../oauth/client.js'
import {
  actionFor,
  INITIAL_TOKEN_STATE,
  type TokenEvent,
  type TokenState,
  type TokenTimes,
  transition,
} from './machine.js'
import type { TokenRecord } from './record.js'
import type { TokenStore } from './store.js'

export interface TokenManagerOptions {
  /** Anything with `refresh(refreshToken)`: the OAuth client. */
  oauth: Pick<OAuthClient, 'refresh'>
  store: TokenStore
  /** Part of a token's lifetime before expiry at which it is refreshed. Default 1/24: 5 minutes of 2 hours. */
  refreshRatio?: number
  /** Retries of a transiently failed refresh (network, time-out, 5xx), with exponential backoff. */
  retry?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number }
  /** The refresh lease, for stores that offer one. */
  lease?: {
    /** How long a lease lasts; longer than a refresh with its retries. Default 60 s. */
    ttlMs?: number
    /** How long to wait for another process's refresh before giving up. Default 65 s. */
    waitMs?: number
    /** First interval between looks at the store while waiting. Default 25 ms, doubling to 500. */
    pollMs?: number
  }
  /**
   * After `invalid_grant`, how long to watch the store for the new refresh token another
   * process may have just obtained with the same one, before declaring the connection dead:
   * at least as long as a refresh can take, so the OAuth client's time-out. Default 10 000 ms
   * (`timeoutMs` of `createOAuthClient`); never less than twice the refused refresh took.
   */
  invalidGrantWaitMs?: number
  /** Keys whose refresh state this process remembers; the least recently used are forgotten past it. Default 10 000. */
  maxTrackedKeys?: number
  /** Clock for token times, for tests. */
  now?: () => number
  onRefreshed?: (key: string, record: TokenRecord) => void
  onRefreshFailed?: (key: string, error: unknown) => void
  onReauthorizationRequired?: (key: string, error: ReauthorizationRequiredError) => void
}

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
}

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

/** What this process remembers of one key. */
interface KeyState {
  state: TokenState
  /** Fingerprint of the record last seen. */
  seen?: string
  /** The last transient failure, thrown while refreshing is on hold. */
  lastError?: unknown
}

/**
 * Per-key state, bounded: two generations of at most `max` keys each. A key read from the
 * older generation moves to the newer; when the newer fills up, the older is dropped whole.
 * O(1) per access, at most `2 * max` keys, and a key in use is never the one forgotten.
 * Forgetting is safe: the state is rebuilt from the stored record on the next access.
 */
class KeyStates {
  #current = new Map<string, KeyState>()
  #previous = new Map<string, KeyState>()
  constructor(readonly max: number) {}

  get size(): number {
    return this.#current.size + this.#previous.size
  }

  get(key: string): KeyState {
    let entry = this.#current.get(key)
    if (entry !== undefined) return entry
    entry = this.#previous.get(key)
    if (entry !== undefined) this.#previous.delete(key)
    else entry = { state: INITIAL_TOKEN_STATE }
    if (this.#current.size >= this.max) {
      this.#previous = this.#current
      this.#current = new Map()
    }
    this.#current.set(key, entry)
    return entry
  }

  delete(key: string): void {
    this.#current.delete(key)
    this.#previous.delete(key)
  }

  peek(key: string): KeyState | undefined {
    return this.#current.get(key) ?? this.#previous.get(key)
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
    throw new ConfigError(`createTokenManager: ${name} must be a number >= 0.`)
  }
  return value
}

/**
 * Keeps access tokens fresh. One refresh per key at a time in this process; across processes
 * too when the store offers leases; never a write over newer tokens when it offers
 * compare-and-set; a refused refresh token is only declared dead after re-reading the store.
 */
export function createTokenManager(options: TokenManagerOptions): TokenManager {
  const { oauth, store } = options
  if (typeof oauth?.refresh !== 'function')
    throw new ConfigError('createTokenManager: oauth must have refresh().')
  for (const method of ['get', 'set', 'delete'] as const) {
    if (typeof store?.[method] !== 'function') {
      throw new ConfigError(`createTokenManager: the store must implement ${method}(key).`)
    }
  }
  const ratio = positive(options.refreshRatio, 1 / 24, 'refreshRatio')
  const attempts = Math.max(1, positive(options.retry?.attempts, 3, 'retry.attempts'))
  const baseDelay = positive(options.retry?.baseDelayMs, 250, 'retry.baseDelayMs')
  const maxDelay = positive(options.retry?.maxDelayMs, 5000, 'retry.maxDelayMs')
  const leaseTtl = positive(options.lease?.ttlMs, 60_000, 'lease.ttlMs')
  const leaseWait = positive(options.lease?.waitMs, 65_000, 'lease.waitMs')
  const leasePoll = Math.max(1, positive(options.lease?.pollMs, 25, 'lease.pollMs'))
  const invalidGrantWait = positive(options.invalidGrantWaitMs, 10_000, 'invalidGrantWaitMs')
  const maxKeys = Math.max(1, positive(options.maxTrackedKeys, 10_000, 'maxTrackedKeys'))
  const clock = options.now ?? Date.now
  const hasLease =
    typeof store.acquireLease === 'function' && typeof store.releaseLease === 'function'
  const hasCas = typeof store.compareAndSet === 'function'

  const keys = new KeyStates(maxKeys)
  // Settled flights are deleted: this map holds only refreshes under way.
  const flights = new Map<string, Promise<TokenRecord>>()

  function times(record: TokenRecord, now: number): TokenTimes {
    const lifetime =
      record.expiresAt - (record.obtainedAt ?? record.expiresAt - DEFAULT_LIFETIME_MS)
    return {
      now,
      refreshAt: record.expiresAt - Math.max(0, lifetime) * ratio,
      expiresAt: record.expiresAt,
    }
  }

  function apply(key: string, event: TokenEvent): TokenState {
    const entry = keys.get(key)
    entry.state = transition(entry.state, event)
    return entry.state
  }

  /** Brings the state up to date with a record just read. */
  function observe(key: string, record: TokenRecord): TokenState {
    const now = clock()
    const print = fingerprint(record)
    const entry = keys.get(key)
    if (entry.seen !== print) {
      entry.seen = print
      apply(key, {
        type: 'record_replaced',
        reauthorizationRequired: record.reauthorizationRequired === true,
        ...times(record, now),
      })
    }
    return apply(key, { type: 'tick', ...times(record, now) })
  }

  function emit<A extends unknown[]>(
    listener: ((...args: A) => void) | undefined,
    ...args: A
  ): void {
    try {
      listener?.(...args)
    } catch {
      // A failing listener must not break token handling.
    }
  }

  async function read(key: string): Promise<TokenRecord> {
    const record = await store.get(key)
    if (record === undefined) {
      keys.delete(key)
      throw new NotConnectedError(key)
    }
    return record
  }

  /** Writes `next` over `base`: compare-and-set when the store can. Resolves to what is stored. */
  async function write(
    key: string,
    base: TokenRecord,
    next: TokenRecord,
  ): Promise<TokenRecord | undefined> {
    const { version: _, ...record } = next
    if (!hasCas) {
      await store.set(key, record)
      return record
    }
    if (await store.compareAndSet!(key, record, base.version)) {
      return { ...record, version: (base.version ?? 0) + 1 }
    }
    return undefined
  }

  function reauthorize(key: string, cause?: unknown): never {
    apply(key, { type: 'refresh_failed', reason: 'invalid_grant' })
    const error = new ReauthorizationRequiredError(key, { cause })
    emit(options.onReauthorizationRequired, key, error)
    throw error
  }

  /** Waits for the lease; or for the record another process writes while holding it. */
  async function takeLease(
    key: string,
    base: TokenRecord,
  ): Promise<{ owner?: string; record?: TokenRecord }> {
    if (!hasLease) return {}
    const owner = globalThis.crypto.randomUUID()
    const deadline = performance.now() + leaseWait
    let pause = leasePoll
    for (;;) {
      if (await store.acquireLease!(key, owner, leaseTtl)) return { owner }
      await sleep(pause)
      pause = Math.min(pause * 2, 500)
      const latest = await read(key)
      if (fingerprint(latest) !== fingerprint(base)) {
        const action = actionFor(observe(key, latest))
        if (action === 'use') return { record: latest }
        if (action === 'reauthorize') reauthorize(key)
      }
      if (performance.now() > deadline) {
        throw new TimeoutError(`Waiting for another process to refresh "${key}"`, leaseWait)
      }
    }
  }

  async function callRefresh(key: string, refreshToken: string) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await oauth.refresh(refreshToken)
      } catch (error) {
        if (!isTransientError(error) || attempt >= attempts) throw error
        emit(options.onRefreshFailed, key, error)
        const delay = Math.min(maxDelay, baseDelay * 2 ** (attempt - 1))
        await sleep(delay / 2 + Math.random() * (delay / 2))
      }
    }
  }

  /**
   * After `invalid_grant`: another process may have spent the same refresh token a moment
   * before us and not yet written what it got. Watch the store, with backoff, for at least as
   * long as a refresh takes; only if no new refresh token appears is the connection dead.
   */
  async function recoverOrReauthorize(
    key: string,
    used: TokenRecord,
    cause: unknown,
    refreshMs: number,
  ): Promise<TokenRecord> {
    const deadline = performance.now() + Math.max(invalidGrantWait, 2 * refreshMs)
    let pause = leasePoll
    for (;;) {
      const latest = await read(key)
      if (latest.refreshToken !== used.refreshToken) {
        if (latest.reauthorizationRequired) reauthorize(key, cause)
        observe(key, latest)
        return latest
      }
      // Another process watched as long and came to the same conclusion.
      if (latest.reauthorizationRequired) reauthorize(key, cause)
      if (performance.now() >= deadline) break
      await sleep(pause)
      pause = Math.min(pause * 2, 500)
    }
    // Without compare-and-set the flag is never written: it could land on a record whose
    // refresh token changed between the read and the write. Each process then finds out once.
    if (!hasCas) reauthorize(key, cause)
    for (let tries = 0; tries < 5; tries++) {
      const latest = await read(key)
      if (latest.refreshToken !== used.refreshToken) {
        if (latest.reauthorizationRequired) reauthorize(key, cause)
        observe(key, latest)
        return latest
      }
      if (latest.reauthorizationRequired) reauthorize(key, cause)
      if (await write(key, latest, { ...latest, reauthorizationRequired: true }))
        reauthorize(key, cause)
    }
    reauthorize(key, cause)
  }

  /**
   * Stores the tokens a refresh just obtained. With a rotating server they are the only valid
   * ones: a write refused because the record was flagged meanwhile, or because something else
   * changed while it still holds the refresh token we spent, is retried on the new version.
   * Only tokens from elsewhere (a reconnect) win over ours.
   */
  async function storeRefreshed(
    key: string,
    base: TokenRecord,
    tokens: Awaited<ReturnType<OAuthClient['refresh']>>,
  ): Promise<TokenRecord> {
    let latest = base
    for (let tries = 0; tries < 10; tries++) {
      const next: TokenRecord = { ...latest, ...tokens }
      delete next.reauthorizationRequired
      const stored = await write(key, latest, next)
      if (stored !== undefined) return stored
      latest = await read(key)
      const ours = latest.reauthorizationRequired || latest.refreshToken === base.refreshToken
      if (!ours) {
        // Newer tokens from elsewhere: they win.
        if (actionFor(observe(key, latest)) === 'use') return latest
        throw new StaleWriteError(key)
      }
    }
    throw new StaleWriteError(key)
  }

  async function refresh(
    key: string,
    base: TokenRecord,
    rejectedToken?: string,
  ): Promise<TokenRecord> {
    apply(key, { type: 'refresh_started' })
    const lease = await takeLease(key, base)
    if (lease.record) return lease.record
    try {
      const current = await read(key)
      if (current.reauthorizationRequired) reauthorize(key)
      if (fingerprint(current) !== fingerprint(base) && current.accessToken !== rejectedToken) {
        // Someone refreshed (or reconnected) since we looked.
        if (actionFor(observe(key, current)) === 'use') return current
        apply(key, { type: 'refresh_started' })
      }
      let tokens: Awaited<ReturnType<OAuthClient['refresh']>>
      const started = performance.now()
      try {
        tokens = await callRefresh(key, current.refreshToken)
      } catch (error) {
        if (isInvalidGrant(error))
          return await recoverOrReauthorize(key, current, error, performance.now() - started)
        // Transient or unexpected: the stored tokens stay exactly as they are.
        apply(key, { type: 'refresh_failed', reason: 'transient', retryAt: clock() + maxDelay })
        keys.get(key).lastError = error
        emit(options.onRefreshFailed, key, error)
        if (clock() < current.expiresAt && current.accessToken !== rejectedToken) return current
        throw error
      }
      const stored = await storeRefreshed(key, current, tokens)
      if (stored.refreshToken !== tokens.refreshToken) return stored
      const entry = keys.get(key)
      entry.seen = fingerprint(stored)
      entry.lastError = undefined
      apply(key, { type: 'refresh_succeeded', ...times(stored, clock()) })
      emit(options.onRefreshed, key, stored)
      return stored
    } finally {
      if (lease.owner !== undefined) await store.releaseLease!(key, lease.owner).catch(() => {})
    }
  }

  async function getRecord(key: string, opts?: GetTokenOptions): Promise<TokenRecord> {
    const record = await read(key)
    const action = actionFor(observe(key, record))
    if (action === 'reauthorize') throw new ReauthorizationRequiredError(key)
    const rejected = opts?.rejectedToken !== undefined && opts.rejectedToken === record.accessToken
    if (action === 'use' && !rejected) return record
    if (action === 'hold' && !rejected) {
      if (clock() < record.expiresAt) return record
      throw keys.peek(key)?.lastError ?? new TimeoutError(`Refreshing "${key}"`, maxDelay)
    }
    let flight = flights.get(key)
    if (flight === undefined) {
      flight = refresh(key, record, rejected ? opts?.rejectedToken : undefined).finally(() =>
        flights.delete(key),
      )
      flights.set(key, flight)
    }
    return flight
  }

  return {
    getRecord,
    async getAccessToken(key, opts) {
      return (await getRecord(key, opts)).accessToken
    },
    state(key) {
      return keys.peek(key)?.state ?? INITIAL_TOKEN_STATE
    },
    get trackedKeys() {
      return keys.size
    },
  }
}
