import type { CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { ReplayOptions, ReplayReport } from '../ledger/replay.js'
import type { LedgerFilter } from '../ledger/store.js'
import type { WebhookResponse } from './answer.js'
import type { WebhookContext, WebhookHandlerFn } from './context.js'
import type { AnyWebhookEvent } from './events.js'
import type { WebhookErrorFn } from './options.js'
import type { EventPattern, EventsMatching } from './registry.js'
import type { WebhookRequest } from './request.js'

// What a webhook handler is to the app and to the adapters: its methods.

/** Handler registration; each method returns `Self` for chaining. */
export interface WebhookRegistration<Self> {
  /** Adds a handler for an event type, several types, a prefix pattern (`event.checkout.*`) or `*`. */
  on<P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): Self
  /** Adds a handler for every event, known or not. */
  onAny(fn: WebhookHandlerFn): Self
  /** Adds a listener told of every error answer. */
  onError(fn: WebhookErrorFn): Self
}

export interface WebhookHandler extends WebhookRegistration<WebhookHandler> {
  /** The path this handler answers. */
  readonly path: string
  /** The body limit in force, in bytes. */
  readonly bodyLimit: number
  /** Answers one request, or resolves to `undefined` when its path is not this handler's. */
  handle(request: WebhookRequest): Promise<WebhookResponse | undefined>
  /** Serves a Fetch `Request` (Hono, Next.js, Bun, Deno, Workers); 404 off its path. */
  fetch(request: Request): Promise<Response>
  /** Runs the matching handlers for an event, e.g. when a queue consumer takes it. */
  dispatch(event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void>
  /**
   * Whether what deliveries depend on answers: the dedupe store, the queue and the
   * subscriptions' store, each asked for its `health()` (one without it is left out). For an
   * app's readiness route (`checkHealth` puts several components together).
   */
  health(options?: HealthOptions): Promise<HealthReport>
  /**
   * Runs recorded deliveries again, in this process, after their verification (option
   * `ledger`): one by its ledger id, or those a filter matches (by default the failed and dead
   * ones of the last 24 hours). Handlers see `context.replay`.
   */
  replay(target: string | LedgerFilter, options?: ReplayOptions): Promise<ReplayReport>
  /**
   * After an outage longer than the service's retries (option `ledger`): lists each account's
   * events from the API and runs each state the ledger has not applied through the handlers,
   * with `context.catchUp`. Says what it cannot recover (`poll.*`, `workflow.*`).
   */
  catchUp(options?: CatchUpOptions): Promise<CatchUpReport>
}
