import { createSchedulingClient, type SchedulingClient } from '../api/client.js'
import { deferredObject } from '../deferred.js'
import { ConfigError } from '../errors/errors.js'
import { checkHealth } from '../health/health.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { FetchLike } from '../http/fetch.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { DeliveryLedgerOptions } from '../ledger/options.js'
import type { Logger } from '../log.js'
import { createOAuthClient, type OAuthClient } from '../oauth/client.js'
import { DeferredOAuthRoutes } from '../oauth/deferred.js'
import type { OAuthRoutesOptions } from '../oauth/options.js'
import type { OAuthRoutes } from '../oauth/routes.js'
import type { WebhookSubscriptions } from '../subscriptions/options.js'
import type { SubscriptionStore } from '../subscriptions/store.js'
import { createWebhookSubscriptions } from '../subscriptions/subscriptions.js'
import type { SweepOptions } from '../subscriptions/sweep-options.js'
import type { RateCap } from '../sweep/rate-cap.js'
import { MemorySweepStore } from '../sweep/store.js'
import type { ConnectionChange } from '../tokens/connection.js'
import type { TokenManager } from '../tokens/contract.js'
import { createTokenManager } from '../tokens/manager.js'
import type { RefreshAhead, RefreshAheadOptions } from '../tokens/refresh-ahead.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import { DeferredWebhookHandler } from '../webhooks/deferred.js'
import { createWebhookHandler } from '../webhooks/handler.js'
import type { WebhookHandlerOptions } from '../webhooks/options.js'
import type { WebhookQueue } from '../webhooks/queue.js'
import type { SecretSource } from '../webhooks/secrets.js'
import {
  ledgerOf,
  pendingCatchUpOf,
  periodicHealth,
  periodicOf,
  refreshAheadOf,
  sweepOf,
} from './parts.js'
import type { PeriodicReport, RunDueOptions } from './periodic.js'
import { memoryStores, type SchedulingStores } from './stores.js'

/** What `createScheduling` takes: every option given once. */
export interface SchedulingOptions {
  clientId: string
  clientSecret: string
  /** The app's callback, e.g. `https://app.example.com/auth/scheduling/callback`. */
  redirectUri: string
  /** The authorization server's address. */
  authUrl: string
  /** The API's address, with its `/v1` when the service needs it. */
  apiUrl: string
  /**
   * The app's webhook address (`https://app.example.com/webhooks/scheduling`): every connected
   * account gets its own webhook there, verified with its own secret. Or give `secret`.
   */
  webhookUrl?: string
  /** One signing secret for every delivery, when accounts do not get webhooks of their own. */
  secret?: SecretSource
  /** Default: `memoryStores()`, for one process. */
  stores?: SchedulingStores
  /**
   * Record every delivery in a ledger on `stores.ledger` (`createDeliveryLedger`): failed ones
   * become dead letters, `replay` and `catchUp` run them again. `true` for its defaults, or its
   * options but `store` (its `cipher` defaults to the stores' own). A ledger made apart is
   * taken as it is. Default none: `stores.dedupe` records the handled payload ids.
   */
  ledger?: boolean | Omit<DeliveryLedgerOptions, 'store'> | DeliveryLedger
  /**
   * A durable queue (`createBullMQQueue`, `createPostgresQueue`): each delivery is answered once
   * its job is stored, and a worker given this same object (`createBullMQWorker({ scheduling
   * })`, `createPostgresWorker({ scheduling })`) runs the handlers, replays and catch-ups.
   */
  queue?: WebhookQueue
  /** Signs the OAuth flow's cookies (required in production: see the OAuth routes' options). */
  cookieSecret?: string | readonly string[]
  scope?: string | readonly string[]
  /**
   * Told of every change of a connection, wherever it happens: connected and disconnected by
   * the OAuth routes, `needs_reauth` by the token manager, a webhook repaired or lost by the
   * subscriptions. Its errors are logged, never thrown.
   */
  onConnectionChange?: (change: ConnectionChange) => void
  /**
   * The rolling check of `subscriptions.sweep()` (with `webhookUrl`): `true`, or its options but
   * `store` (`stores.sweeps`) and `ledger` (this ledger, when there is one).
   */
  sweep?: true | Omit<SweepOptions, 'store' | 'ledger'>
  /** One request rate for every API call of the subscriptions (`RateCap`). */
  rateCap?: RateCap
  /**
   * Refresh every connection's token ahead of its expiry, off the request path
   * (`scheduling.refreshAhead.step()`): `true`, or its options but `store` (`stores.sweeps`) and
   * `keys` (the subscriptions' keys, unless given).
   */
  refreshAhead?:
    | true
    | (Omit<RefreshAheadOptions, 'store' | 'keys'> & Partial<Pick<RefreshAheadOptions, 'keys'>>)
  /**
   * The periodic work's part of `health()`: a task whose shared checkpoints are further behind
   * than this, in ms, fails the check. Default 20 minutes (past the slowest cadence, 15 min).
   */
  maxBehindMs?: number
  logger?: Logger
  fetch?: FetchLike
  /** Clock in ms since the epoch, for tests: the token manager's, the subscriptions', the refresh's. Default `Date.now`. */
  now?: () => number
}

/** The options the adapters and core's factories read from a `Scheduling`. */
type AsOptions = Omit<OAuthRoutesOptions<unknown>, 'onError' | 'subscriptions'> &
  Omit<WebhookHandlerOptions, 'onError' | 'subscriptions' | 'logger'>

/**
 * Everything of one app, configured once. It is itself the options of the adapters' and core's
 * factories: `schedulingWebhooks(scheduling)`, `schedulingOAuth(scheduling)`,
 * `createWebhookHandler(scheduling)`, `createOAuthRoutes(scheduling)`, each sharing its stores,
 * its token manager and its subscriptions.
 */
export interface Scheduling extends AsOptions {
  readonly apiUrl: string
  readonly tokenStore: SchedulingStores['tokens']
  /** The account webhooks, when `webhookUrl` was given. */
  readonly subscriptions: WebhookSubscriptions | undefined
  /** The OAuth client (authorize URLs, code exchange, refresh). */
  readonly oauth: OAuthClient
  /** The token manager every part of the app shares. */
  readonly tokens: TokenManager
  /** The delivery ledger, when `ledger` was given: `list`, `get`, `purge`, its store. */
  readonly ledger: DeliveryLedger | undefined
  /** The queue deliveries are accepted into, when `queue` was given. */
  readonly queue: WebhookQueue | undefined
  /** The refresh ahead of every connection's token, when `refreshAhead` was given (`runDue()` steps it). */
  readonly refreshAhead: RefreshAhead | undefined
  /**
   * Runs the periodic work that is due (the refresh ahead, the sweep) within a time budget
   * (`budgetMs`, default 10 s), taking up where the last call ended on whichever instance: call
   * it from a cron, a serverless route or a timer, at any cadence from 10 s to 15 min. Reports
   * each task's steps and how far behind it left them; `health()` fails when they fall behind.
   */
  runDue(options?: RunDueOptions): Promise<PeriodicReport>
  /** A webhook handler of the app's own (plain data or Fetch), for a server with no adapter. */
  readonly webhooks: WebhookHandler
  /** The API client for one connected account, its token kept fresh by `tokens`. */
  client(key: string): SchedulingClient
  /**
   * Whether what the app depends on answers, for a readiness route: the token store, the
   * dedupe store (without a ledger), the subscriptions' store, the ledger's store and the queue.
   */
  health(options?: HealthOptions): Promise<HealthReport>
}

/**
 * One object to configure the whole toolkit: the OAuth client, the token manager, each account's
 * webhook, the delivery ledger, the queue and a webhook handler, all on the same stores; a
 * queue's worker takes the same object. The pieces stay usable alone.
 *
 * @example
 * ```ts
 * const scheduling = createScheduling({
 *   clientId, clientSecret, redirectUri, authUrl, apiUrl, cookieSecret,
 *   webhookUrl: 'https://app.example.com/webhooks/scheduling',
 *   stores: redisStores({ client: redis, prefix: 'app:', cipher }),
 *   ledger: { retention: { bodyMs: 7 * 86_400_000 } },
 * })
 * app.use(schedulingWebhooks(scheduling).on('event.created', (event, { account }) => {}))
 * app.use('/auth/scheduling', schedulingOAuth(scheduling))
 * const me = await scheduling.client(userId).me()
 * ```
 *
 * Given a function instead, the options are read at first use (a serverless route, `next
 * build` importing every route without the runtime's environment):
 * `createScheduling(() => ({ clientId: process.env.SCHEDULING_CLIENT_ID!, ... }))`.
 */
export function createScheduling(
  options: SchedulingOptions | (() => SchedulingOptions),
): Scheduling {
  if (typeof options === 'function') return deferredScheduling(options)
  checkOptions(options)
  const { secret, apiUrl } = options
  const stores = { ...memoryStores(), ...options.stores }
  const { logger, fetch, queue, onConnectionChange, now } = options
  const clock = now === undefined ? {} : { now }
  // One store for every rolling schedule's checkpoints: the sweep's and the refresh's.
  const sweepStore = stores.sweeps ?? new MemorySweepStore()
  const told = onConnectionChange === undefined ? {} : { onConnectionChange }
  const ledger = ledgerOf(options.ledger, stores, logger)
  const oauth = createOAuthClient({ ...pick(options), fetch, ...clock })
  // The addresses the OAuth routes stamp on a connection: a record of another app is refused.
  const app = {
    tokenUrl: `${withoutTrailingSlashes(options.authUrl)}/oauth/token`,
    apiUrl: withoutTrailingSlashes(apiUrl),
  }
  const sweep = sweepOf(options.sweep, sweepStore, ledger)
  const tokens = createTokenManager({ oauth, store: stores.tokens, app, ...told, ...clock })
  const subscriptions = subscriptionsOf(options, tokens, stores.subscriptions, sweep)
  // The options part: what the adapters' and core's factories read.
  const asOptions = {
    ...pick(options),
    apiUrl,
    tokenStore: stores.tokens,
    dedupe: stores.dedupe,
    subscriptions,
    ledger,
    queue,
    ...told,
    ...(secret === undefined ? {} : { secret }),
    ...(options.cookieSecret === undefined ? {} : { cookieSecret: options.cookieSecret }),
    ...(logger === undefined ? {} : { logger }),
    ...(fetch === undefined ? {} : { fetch }),
  }
  const checked = {
    tokens: stores.tokens,
    // With a ledger, deliveries are recorded there: the dedupe store is not used.
    dedupe: ledger === undefined ? stores.dedupe : undefined,
    subscriptions: subscriptions === undefined ? undefined : stores.subscriptions,
    ledger: ledger?.store,
    queue,
  }
  const refreshAhead = refreshAheadOf(options.refreshAhead, tokens, subscriptions, {
    store: sweepStore,
    onConnectionChange,
    now,
  })
  const webhooks = createWebhookHandler(asOptions)
  const catchUp = pendingCatchUpOf(ledger, subscriptions, sweepStore, () => webhooks)
  const periodic = periodicOf(refreshAhead, subscriptions, sweep, logger, catchUp)
  const periodicChecked = periodicHealth(periodic, sweepStore, now ?? Date.now, options.maxBehindMs)
  return {
    ...asOptions,
    oauth,
    tokens,
    refreshAhead,
    runDue: (runOptions) => periodic.run(runOptions),
    webhooks,
    client: (key) =>
      createSchedulingClient({ baseUrl: apiUrl, token: { manager: tokens, key }, fetch }),
    health: (healthOptions) =>
      checkHealth({ ...checked, periodic: periodicChecked }, healthOptions),
  }
}

/** With `webhookUrl`, each connected account's webhook, made there and kept; else none. */
function subscriptionsOf(
  options: SchedulingOptions,
  tokens: TokenManager,
  store: SubscriptionStore,
  sweep: SweepOptions | undefined,
): WebhookSubscriptions | undefined {
  const { webhookUrl, apiUrl, fetch, logger, onConnectionChange, now, rateCap } = options
  if (webhookUrl === undefined) return undefined
  return createWebhookSubscriptions({
    url: webhookUrl,
    tokens,
    apiUrl,
    store,
    fetch,
    logger,
    ...(onConnectionChange === undefined ? {} : { onConnectionChange }),
    ...(now === undefined ? {} : { now }),
    ...(rateCap === undefined ? {} : { rateCap }),
    ...(sweep === undefined ? {} : { sweep }),
  })
}

/** The options' mistakes `createScheduling` tells at once, each with what to pass. */
function checkOptions(options: SchedulingOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new ConfigError('createScheduling: pass the options object.')
  const { webhookUrl, secret, apiUrl, queue } = options
  if ((webhookUrl === undefined) === (secret === undefined))
    throw new ConfigError(
      'createScheduling: pass webhookUrl (each connected account gets its own webhook there) or secret (one signing secret for every delivery), one of the two.',
    )
  if (typeof apiUrl !== 'string' || apiUrl === '')
    throw new ConfigError(
      'createScheduling: apiUrl is the API address, e.g. https://api.example.com/v1.',
    )
  if (queue !== undefined && typeof queue?.enqueue !== 'function')
    throw new ConfigError(
      'createScheduling: queue must have enqueue(): pass createBullMQQueue(...) or createPostgresQueue(...).',
    )
}

/**
 * `createScheduling(() => options)`: the options read and every part built at the first read
 * of a member (a request, a cron call), not where the module loads. `webhooks`, and the
 * handlers and routes `createWebhookHandler(scheduling)` and `createOAuthRoutes(scheduling)`
 * make of it, wait for their first delivery or request: a route module registers its handlers
 * at import. A missing option is told at that first use, with the eager call's message.
 */
function deferredScheduling(read: () => SchedulingOptions): Scheduling {
  return deferredObject(
    () => createScheduling(read()),
    (built) => ({
      members: { webhooks: new DeferredWebhookHandler(() => built().webhooks) },
      wait: {
        webhooks: (make: (options: Scheduling) => WebhookHandler) =>
          new DeferredWebhookHandler(() => make(built())),
        oauth: (make: (options: Scheduling) => OAuthRoutes<unknown>) =>
          new DeferredOAuthRoutes(() => make(built())),
      },
    }),
  )
}

/** The OAuth client's options among the app's. */
function pick(options: SchedulingOptions) {
  const { clientId, clientSecret, redirectUri, authUrl, scope } = options
  return { clientId, clientSecret, redirectUri, authUrl, ...(scope === undefined ? {} : { scope }) }
}
