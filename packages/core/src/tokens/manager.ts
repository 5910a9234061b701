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
  const clock = options.now ?? Date.now
  const hasLease =
    typeof store.acquireLease === 'function' && typeof store.releaseLease === 'function'
  const hasCas = typeof store.compareAndSet === 'function'

  const states = new Map<string, TokenState>()
  const seen = new Map<string, string>()
  const lastError = new Map<string, unknown>()
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
    const next = transition(states.get(key) ?? INITIAL_TOKEN_STATE, event)
    states.set(key, next)
    return next
  }

  /** Brings the state up to date with a record just read. */
  function observe(key: string, record: TokenRecord): TokenState {
    const now = clock()
    const print = fingerprint(record)
    if (seen.get(key) !== print) {
      seen.set(key, print)
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
      states.delete(key)
      seen.delete(key)
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

  /** After `invalid_grant`: another process may have refreshed; only then is the token dead. */
  async function recoverOrReauthorize(
    key: string,
    used: TokenRecord,
    cause: unknown,
  ): Promise<TokenRecord> {
    for (let tries = 0; tries < 3; tries++) {
      const latest = await read(key)
      if (latest.reauthorizationRequired) reauthorize(key, cause)
      if (latest.refreshToken !== used.refreshToken) {
        observe(key, latest)
        return latest
      }
      if (await write(key, latest, { ...latest, reauthorizationRequired: true }))
        reauthorize(key, cause)
    }
    reauthorize(key, cause)
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
      try {
        tokens = await callRefresh(key, current.refreshToken)
      } catch (error) {
        if (isInvalidGrant(error)) return await recoverOrReauthorize(key, current, error)
        // Transient or unexpected: the stored tokens stay exactly as they are.
        apply(key, { type: 'refresh_failed', reason: 'transient', retryAt: clock() + maxDelay })
        lastError.set(key, error)
        emit(options.onRefreshFailed, key, error)
        if (clock() < current.expiresAt && current.accessToken !== rejectedToken) return current
        throw error
      }
      const next: TokenRecord = { ...current, ...tokens }
      delete next.reauthorizationRequired
      const stored = await write(key, current, next)
      if (stored === undefined) {
        // Our lease ran out and newer tokens were written meanwhile: they win.
        const latest = await read(key)
        if (actionFor(observe(key, latest)) === 'use') return latest
        throw new StaleWriteError(key)
      }
      seen.set(key, fingerprint(stored))
      apply(key, { type: 'refresh_succeeded', ...times(stored, clock()) })
      lastError.delete(key)
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
      throw lastError.get(key) ?? new TimeoutError(`Refreshing "${key}"`, maxDelay)
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
      return states.get(key) ?? INITIAL_TOKEN_STATE
    },
  }
}
