import type { SchedulingClient } from '../api/client.js'
import type { ApiRetryOptions } from '../api/retry.js'
import { ConfigError } from '../errors/errors.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { FetchLike } from '../http/fetch.js'
import { checkLogger, consoleLogger, type Logger } from '../log.js'
import type { RateCap } from '../sweep/rate-cap.js'
import type { PhaseRange } from '../sweep/schedule.js'
import type { StepOptions } from '../sweep/step.js'
import type { ConnectionChange, ConnectionStatus } from '../tokens/connection.js'
import type { TokenManager } from '../tokens/contract.js'
import { wholeNumber } from '../validate.js'
import type { WebhookOwner } from './lookup.js'
import type { ReconcileReport, SweepReport } from './reports.js'
import type { StoredSubscription, SubscriptionStore } from './store.js'
import type { SweepOptions } from './sweep-options.js'

export interface WebhookSubscriptionsOptions {
  /** Where the service delivers: your webhook endpoint's public address, `https://app.example.com/webhooks/scheduling`. */
  url: string
  /**
   * The token manager of the connected accounts: each account's webhooks are managed with its
   * own token. With `getRecord` (a token manager has it), each webhook is stamped with the
   * service account it was made in, so a key connected again to another account never keeps,
   * nor runs handlers for, the old account's webhook; with `status`, `status(key)` tells the
   * connection too.
   */
  tokens: Pick<TokenManager, 'getAccessToken'> & Partial<Pick<TokenManager, 'getRecord' | 'status'>>
  /** The API's address, with `/v1`. */
  apiUrl: string
  /** Where each account's webhooks and secrets are kept. */
  store: SubscriptionStore
  /**
   * How long a webhook this app retired (rotated away, or its account removed) still has its
   * deliveries verified, in ms: deliveries already on their way are then accepted, not refused.
   * Those of a removed account are answered 200 without running handlers. Default 3 days.
   */
  graceMs?: number
  /**
   * How long a webhook's owner and secret are kept in this process after a lookup, in ms, so a
   * delivery costs no store read. Changes made by this process apply at once; another
   * instance's within this time. An id no record lists is remembered as unknown for at most a
   * second (a flood of one made-up id reads the store once a second). Default 1 000; 0 reads
   * the store for every delivery.
   */
  cacheMs?: number
  /**
   * The most webhooks whose owner this process keeps, by recency: past it, the webhook whose
   * delivery came longest ago is forgotten first (never the whole cache at once). About 200 B
   * each. Default 100 000.
   */
  cacheSize?: number
  /** An account's lease, taken by each change to its webhooks and renewed while it runs, in ms. Default 30 000. */
  leaseTtlMs?: number
  /** How long `ensure`, `remove` and `rotate` wait for another instance's lease on the account, in ms. Default 60 000. */
  leaseWaitMs?: number
  /** Accounts `reconcile` works on at once. Default 4. */
  concurrency?: number
  /** Retries of the API calls (429, 5xx); see `createSchedulingClient`. */
  retry?: ApiRetryOptions
  /** Time-out of one API request, in ms. Default 10 000. */
  timeoutMs?: number
  fetch?: FetchLike
  /** Where repairs and failures are told. Default `console`. */
  logger?: Logger
  /** Clock, in ms since the epoch, for tests. Default `Date.now`. */
  now?: () => number
  /** Told when `ensure` or `reconcile` repaired an account's webhook (`webhook_repaired`). */
  onConnectionChange?: (change: ConnectionChange) => void
  /** The rolling check of `sweep()`: each account once a period, the healthy ones not listed. */
  sweep?: SweepOptions
  /** One request rate for every API call the subscriptions make (`RateCap`); 429s lower it. */
  rateCap?: RateCap
}

/** What `ensure` found or did. */
export interface EnsureResult {
  /** The account's webhook now. */
  webhookId: string
  /** Whether a webhook was created (none was working). */
  created: boolean
  /** Webhooks retired on the way (disabled, deleted, or extra ones). */
  retired: string[]
}

/** What `remove` did. */
export interface RemoveResult {
  /** Webhooks deleted at the service (or found gone). */
  deleted: string[]
  /** Webhooks whose deletion failed: `reconcile` tries again while the account's token works. */
  failed: string[]
}

/** What `rotate` did. */
export interface RotateResult {
  /** The new webhook, with its new secret. */
  webhookId: string
  /** The webhooks it replaced; each is deleted at the service unless listed in `failed`. */
  retired: string[]
  /** Retired webhooks whose deletion failed: `reconcile` deletes them later. */
  failed: string[]
}

export interface WebhookSubscriptions {
  /** The delivery address the webhooks point at. */
  readonly url: string
  /** The API's address the webhooks are managed at. */
  readonly apiUrl: string
  /**
   * Where the key's connection stands: from the token manager (`connected`, `needs_reauth`,
   * `disconnected`, the service account) when it has `status`, and the key's webhook.
   */
  status(key: string): Promise<ConnectionStatus>
  /**
   * Makes sure the account has exactly one working webhook at `url`, creating one when it has
   * none that works. Idempotent, and safe from several instances at once: one remote webhook.
   */
  ensure(key: string): Promise<EnsureResult>
  /** Deletes the account's webhooks at the service (while its token still works) and marks it removed. */
  remove(key: string): Promise<RemoveResult>
  /**
   * Ends the webhooks of the key's current connection (as `remove`, with its token) and then
   * runs `change`, the token store write that disconnects the key or connects it to another
   * service account, both under the account's lease: no other instance ensures a webhook in
   * between for a connection on its way out. The OAuth routes call it; `change`'s result is
   * passed through.
   */
  replaceConnection<T>(key: string, change: () => Promise<T>): Promise<RemoveResult & { result: T }>
  /**
   * A new secret without a gap: creates a second webhook, accepts both while both exist, then
   * deletes the old one. A failure at any step leaves the account a working webhook.
   */
  rotate(key: string): Promise<RotateResult>
  /**
   * Repairs every account's drift (a webhook missing, `disabled`, `deleted`, duplicated at
   * `url`, or left over), reports what it did. Safe on every instance at once: an account
   * another instance is working on is skipped.
   */
  reconcile(): Promise<ReconcileReport>
  /**
   * One step of the rolling check (option `sweep`): the accounts whose turn came since the last
   * step of the shards this instance holds, each listed and repaired as by `reconcile` unless
   * it delivered within `healthyWithin`. Call it every minute or so, on every instance.
   */
  sweep(options?: StepOptions): Promise<SweepReport>
  /** The account and secret of a webhook id, as the webhook handler uses them; `undefined` when none. */
  lookup(webhookId: string): WebhookOwner | undefined | Promise<WebhookOwner | undefined>
  /** The store's health (`store.health()`), for the webhook handler's `health()`. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** The stored record of an account. */
  get(key: string): Promise<StoredSubscription | undefined>
  /** The account's API client, its token from the token manager (what `catchUp` lists with). */
  client(key: string): SchedulingClient
  /**
   * The keys of the accounts with a live subscription, from the store; with `phases`, at least
   * those whose phase (`phaseOf`) falls in it, as the store's `keys` gives them.
   */
  keys(phases?: PhaseRange): AsyncIterable<string>
}

const positive = (value: number | undefined, fallback: number, name: string) =>
  wholeNumber('createWebhookSubscriptions', name, value, fallback, { min: 0, unit: 'ms' })

export function checkOptions(options: WebhookSubscriptionsOptions) {
  const where = 'createWebhookSubscriptions'
  if (typeof options?.url !== 'string' || !URL.canParse(options.url)) {
    throw new ConfigError(
      `${where}: url must be the absolute address the service delivers to, e.g. https://app.example.com/webhooks/scheduling.`,
    )
  }
  if (!/^https?:$/.test(new URL(options.url).protocol)) {
    throw new ConfigError(`${where}: url must be an http: or https: address.`)
  }
  if (typeof options.tokens?.getAccessToken !== 'function') {
    throw new ConfigError(`${where}: tokens must be a token manager (createTokenManager).`)
  }
  if (typeof options.apiUrl !== 'string' || !URL.canParse(options.apiUrl)) {
    throw new ConfigError(
      `${where}: apiUrl must be the API's absolute address with /v1, e.g. https://api.example.com/v1.`,
    )
  }
  const store = options.store as Partial<SubscriptionStore> | undefined
  const methods = [
    'get',
    'compareAndSet',
    'delete',
    'findByWebhook',
    'keys',
    'acquireLease',
    'releaseLease',
  ] as const
  const missing = methods.filter((m) => typeof store?.[m] !== 'function')
  if (missing.length > 0) {
    throw new ConfigError(
      `${where}: store must be a subscription store (MemorySubscriptionStore, RedisSubscriptionStore, PostgresSubscriptionStore); it has no ${missing.join(', ')}.`,
    )
  }
  const concurrency = wholeNumber(where, 'concurrency', options.concurrency, 4)
  return {
    graceMs: positive(options.graceMs, 3 * 24 * 60 * 60_000, 'graceMs'),
    cacheMs: positive(options.cacheMs, 1_000, 'cacheMs'),
    cacheSize: wholeNumber(where, 'cacheSize', options.cacheSize, 100_000),
    leaseTtlMs: Math.max(1_000, positive(options.leaseTtlMs, 30_000, 'leaseTtlMs')),
    leaseWaitMs: positive(options.leaseWaitMs, 60_000, 'leaseWaitMs'),
    concurrency,
    logger: checkLogger(options.logger, where) ?? consoleLogger,
    now: options.now ?? Date.now,
  }
}

/** What `checkOptions` resolved. */
export type SubscriptionSettings = ReturnType<typeof checkOptions>
