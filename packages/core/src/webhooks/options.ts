import type { DedupeStore } from '../claims/dedupe.js'
import type { WebhookError } from '../errors/errors.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { Logger } from '../log.js'
import type { WebhookSubscriptions } from '../subscriptions/options.js'
import type { WebhookHandlerFn } from './context.js'
import type { AnyWebhookEvent } from './events.js'
import type { WebhookQueue } from './queue.js'
import type { HandlerMap } from './registry.js'
import type { SecretSource } from './secrets.js'
import type { HeaderNames } from './verify.js'

/** What `onError` learns: the delivery, as far as it got. */
export interface WebhookErrorContext {
  webhookId: string | undefined
  /** The event, when the body was verified and parsed before the failure. */
  event: AnyWebhookEvent | undefined
}

export type WebhookErrorFn = (
  error: WebhookError,
  context: WebhookErrorContext,
) => unknown | Promise<unknown>

/** What the handler needs of `createWebhookSubscriptions`' result. */
export type SubscriptionLookup = Pick<WebhookSubscriptions, 'lookup'> &
  Partial<Pick<WebhookSubscriptions, 'health'>>

export interface WebhookHandlerOptions extends HeaderNames {
  /**
   * The signing secret, several while rotating, or a lookup `(webhookId) => secret`. Not with
   * `subscriptions`, which gives each connected account's webhook its own.
   */
  secret?: SecretSource
  /**
   * Connected accounts' webhooks (`createWebhookSubscriptions`): each delivery is verified with
   * the secret of the webhook its `x-service-webhook-id` names, and handlers get
   * `context.account`. A webhook id this app never created is refused (401 `secret_unknown`);
   * one of an account it removed is answered 200 without handlers for the grace period.
   */
  subscriptions?: SubscriptionLookup
  /**
   * `false` for a handler that only runs handlers for events a queue's worker hands it
   * (`createBullMQWorker`, `createPostgresWorker`): the web process verified them, so it needs
   * no secret and no subscriptions. It verifies nothing, so every request it is given anyway
   * is refused (401 `secret_unknown`). Default `true`.
   */
  verify?: boolean
  /** The path answered, relative to where the handler is mounted. Default `/webhooks/scheduling`. */
  path?: string
  /** Handlers by event type or pattern: `{ 'event.created': fn, 'event.checkout.*': fn }`. */
  on?: HandlerMap
  /** Runs for every event, known or not. */
  onAny?: WebhookHandlerFn
  /** Told of every delivery answered with an error (for logging); cannot change the answer. */
  onError?: WebhookErrorFn
  /** Accept events into a durable queue instead of running handlers before answering. */
  queue?: WebhookQueue
  /** Remembers handled payload ids so retries run handlers once. Default: in memory. `false` turns it off. */
  dedupe?: DedupeStore | false
  /**
   * Records every verified delivery and its outcome (`createDeliveryLedger`): failed ones
   * become dead letters, `replay` runs them again. It is the dedupe record then (`dedupe` unused).
   */
  ledger?: DeliveryLedger
  /**
   * How old, in ms, a delivery's signed `occurred_at` may be for its body to run: past the
   * time the record still knows a delivery, a captured body sent again would run as a first
   * one. An older body is answered 200 `too_old` and told to `onError`; with a ledger and
   * subscriptions its account's Events are read again from the API and what differs is run as
   * catch-up runs it. Default: the ledger's `retention.entryMs`, else the dedupe store's
   * `ttlMs` (24 h in memory), else 24 h. `false` runs bodies of any age.
   */
  maxAgeMs?: number | false
  /** Largest body accepted, in bytes; enforced while reading. Default 1 MiB. */
  bodyLimit?: number
  /** How long a body may take to arrive, in ms: past it, 408 and the connection is closed. Default 30 000. */
  bodyTimeoutMs?: number
  /**
   * Most bytes held at once by bodies still arriving, across all requests to this handler. A
   * request whose declared length does not fit is answered 503 `server_busy` without reading
   * it (one without a length, as soon as a chunk does not fit): the service delivers it again
   * later. Bounds what many slow or stalled senders can hold. Default 64 MiB; at least `bodyLimit`.
   */
  maxPendingBytes?: number
  /**
   * Where failures are told: a handler's exception with its stack, a parsed body or a secret
   * with white space (once), refused requests (summarised once a minute). Default: the
   * framework's logger where it has one (Fastify's `request.log`, Koa's `error` event for
   * exceptions), else `console`.
   */
  logger?: Logger
}

/** The options of `createWebhookHandler(secret, options)`: all but the secret. */
export type WebhookHandlerRestOptions = Omit<WebhookHandlerOptions, 'secret'>
