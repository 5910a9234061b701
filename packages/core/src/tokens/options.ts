import { ConfigError, type ReauthorizationRequiredError } from '../errors.js'
import type { OAuthClient } from '../oauth/client.js'
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

/** The options checked, with every default applied. */
export interface ManagerSettings {
  options: TokenManagerOptions
  oauth: Pick<OAuthClient, 'refresh'>
  store: TokenStore
  ratio: number
  attempts: number
  baseDelay: number
  maxDelay: number
  leaseTtl: number
  leaseWait: number
  leasePoll: number
  invalidGrantWait: number
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
  return {
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
    invalidGrantWait: positive(options.invalidGrantWaitMs, 10_000, 'invalidGrantWaitMs'),
    maxKeys: Math.max(1, positive(options.maxTrackedKeys, 10_000, 'maxTrackedKeys')),
    clock: options.now ?? Date.now,
    hasLease: typeof store.acquireLease === 'function' && typeof store.releaseLease === 'function',
    hasCas: typeof store.compareAndSet === 'function',
  }
}
