import type { ReauthorizationRequiredError } from '../errors/connection.js'
import { ConfigError } from '../errors/errors.js'
import type { ConnectionChange } from './connection.js'
import type { ConnectionApp, TokenRecord, TokenSet } from './record.js'
import type { TokenStore } from './store.js'

/**
 * What the token manager needs of an OAuth client: `refresh(refreshToken)`. The OAuth client
 * (`createOAuthClient`) is one; declared here so that tokens sit below OAuth.
 */
export interface TokenRefresher {
  refresh(refreshToken: string, options?: { timeoutMs?: number }): Promise<TokenSet>
}

export interface TokenManagerOptions {
  /** Anything with `refresh(refreshToken)`: the OAuth client. */
  oauth: TokenRefresher
  store: TokenStore
  /**
   * The app this manager serves: its token endpoint and API address (`createScheduling` sets
   * them). A record made for another app (its `app` names another address) is refused with
   * `NotConnectedError` naming both, never refreshed at or used against this app's service.
   */
  app?: ConnectionApp
  /** Part of a token's lifetime before expiry at which it is refreshed. Default 1/24: 5 minutes of 2 hours. */
  refreshRatio?: number
  /**
   * Retries of a refresh the server answered 429 or 5xx, or that could not connect, with
   * exponential backoff. A token request that timed out is never sent again in the same
   * refresh: the server may have spent the refresh token, and its answer is the only copy of
   * the new one.
   */
  retry?: {
    attempts?: number
    baseDelayMs?: number
    maxDelayMs?: number
    /**
     * How long one token request may take before it is given up, in ms. Default 15 000. It
     * replaces the OAuth client's own `timeoutMs` for refreshes: a slow answer is waited for
     * (the lease renewed meanwhile) instead of resent.
     */
    requestTimeoutMs?: number
  }
  /** The refresh lease, for stores that offer one. */
  lease?: {
    /**
     * How long a lease lasts without renewal. The holder renews it every third of this while it
     * works; even so it must cover a whole refresh (`retry.attempts` x `retry.requestTimeoutMs`
     * plus backoff), so a holder whose renewals fail (a store blip) still finishes inside it:
     * checked at set-up. Default 60 s.
     */
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
  /**
   * How long a token kept in this process is used without looking at the store, in ms: past
   * it, the next call reads the store again (one read), so a disconnect or a reconnection made
   * by another instance is seen within this time, and at most a quarter second more (a kept
   * token costs no clock read: a timer drops it). This process's own routes tell the manager
   * at once (see `announceConnectionChange`). Default 5 000; 0 reads the store on every call.
   */
  revalidateMs?: number
  /** Keys whose refresh state this process remembers; the least recently used are forgotten past it. Default 10 000. */
  maxTrackedKeys?: number
  /** Clock for token times, for tests. */
  now?: () => number
  onRefreshed?: (key: string, record: TokenRecord) => void
  onRefreshFailed?: (key: string, error: unknown) => void
  onReauthorizationRequired?: (key: string, error: ReauthorizationRequiredError) => void
  /** Told when a key's connection needs its owner to connect again (`needs_reauth`). */
  onConnectionChange?: (change: ConnectionChange) => void
}

/** The options checked, with every default applied. */
export interface ManagerSettings {
  options: TokenManagerOptions
  oauth: TokenRefresher
  store: TokenStore
  ratio: number
  attempts: number
  baseDelay: number
  maxDelay: number
  leaseTtl: number
  leaseWait: number
  leasePoll: number
  leaseRenew: number
  requestTimeout: number
  invalidGrantWait: number
  revalidate: number
  maxKeys: number
  clock: () => number
  hasLease: boolean
  hasCas: boolean
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!(typeof value === 'number' && value >= 0 && Number.isFinite(value))) {
    throw new ConfigError(`createTokenManager: ${name} must be a number >= 0.`)
  }
  return value
}

/**
 * The longest a refresh can take with every retry: each attempt's time-out and the longest
 * backoff before each retry.
 */
export function refreshBudget(
  s: Pick<ManagerSettings, 'attempts' | 'requestTimeout' | 'baseDelay' | 'maxDelay'>,
): number {
  let total = s.attempts * s.requestTimeout
  for (let attempt = 1; attempt < s.attempts; attempt++)
    total += Math.min(s.maxDelay, s.baseDelay * 2 ** (attempt - 1))
  return total
}

/** Checks the options (throwing `ConfigError` with the fix) and applies the defaults. */
export function resolveManagerSettings(options: TokenManagerOptions): ManagerSettings {
  const { oauth, store } = options
  if (typeof oauth?.refresh !== 'function')
    throw new ConfigError('createTokenManager: oauth must have refresh().')
  for (const method of ['get', 'set', 'delete'] as const) {
    if (typeof store?.[method] !== 'function') {
      throw new ConfigError(`createTokenManager: the store must implement ${method}(key).`)
    }
  }
  const settings: ManagerSettings = {
    options,
    oauth,
    store,
    ratio: positive(options.refreshRatio, 1 / 24, 'refreshRatio'),
    attempts: Math.max(1, positive(options.retry?.attempts, 3, 'retry.attempts')),
    baseDelay: positive(options.retry?.baseDelayMs, 250, 'retry.baseDelayMs'),
    maxDelay: positive(options.retry?.maxDelayMs, 5000, 'retry.maxDelayMs'),
    leaseTtl: positive(options.lease?.ttlMs, 60_000, 'lease.ttlMs'),
    leaseWait: positive(options.lease?.waitMs, 65_000, 'lease.waitMs'),
    leasePoll: Math.max(1, positive(options.lease?.pollMs, 25, 'lease.pollMs')),
    leaseRenew: 0,
    requestTimeout: Math.max(
      1,
      positive(options.retry?.requestTimeoutMs, 15_000, 'retry.requestTimeoutMs'),
    ),
    invalidGrantWait: positive(options.invalidGrantWaitMs, 10_000, 'invalidGrantWaitMs'),
    revalidate: positive(options.revalidateMs, 5_000, 'revalidateMs'),
    maxKeys: Math.max(1, positive(options.maxTrackedKeys, 10_000, 'maxTrackedKeys')),
    clock: options.now ?? Date.now,
    hasLease: typeof store.acquireLease === 'function' && typeof store.releaseLease === 'function',
    hasCas: typeof store.compareAndSet === 'function',
  }
  settings.leaseRenew = Math.max(1, Math.floor(settings.leaseTtl / 3))
  const budget = refreshBudget(settings)
  if (settings.hasLease && budget > settings.leaseTtl) {
    throw new ConfigError(
      `createTokenManager: a refresh can take ${budget} ms (retry.attempts ${settings.attempts} x retry.requestTimeoutMs ${settings.requestTimeout}, plus backoff), longer than lease.ttlMs ${settings.leaseTtl}: if the lease's renewals failed, it could lapse mid-refresh and a second process would spend the same refresh token. Raise lease.ttlMs to at least ${budget}, or lower retry.attempts or retry.requestTimeoutMs.`,
    )
  }
  return settings
}
