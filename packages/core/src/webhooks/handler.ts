import { isWebhookError, WebhookError } from '../errors.js'
import { errorAnswer, json, type WebhookResponse } from './answer.js'
import { MemoryDedupeStore } from './dedupe.js'
import { deliverOnce } from './deliver.js'
import type { AnyWebhookEvent } from './events.js'
import {
  normalizePath,
  resolveSettings,
  type Settings,
  type WebhookErrorContext,
  type WebhookErrorFn,
  type WebhookHandlerOptions,
} from './options.js'
import { receive, type WebhookRequest } from './receive.js'
import {
  type EventPattern,
  type EventsMatching,
  HandlerRegistry,
  type WebhookContext,
  type WebhookHandlerFn,
} from './registry.js'
import type { SecretSource } from './secrets.js'

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
   * The answer to an error an adapter met before `handle` could (its framework refused a body
   * over the limit, say): reported to `onError` like any other.
   */
  respond(error: WebhookError, context?: Partial<WebhookErrorContext>): Promise<WebhookResponse>
}

const EVICTION_REPORT_INTERVAL_MS = 60_000

/**
 * Reports, through `report`, an in-memory dedupe store forgetting payload ids before their
 * time (a late retry of one would run its handlers twice): at most once a minute, with a count.
 */
function watchEvictions(store: MemoryDedupeStore, report: (error: WebhookError) => void): void {
  let lastReport = Number.NEGATIVE_INFINITY
  let evicted = 0
  store.onEarlyEviction((eviction) => {
    evicted += eviction.count
    const now = Date.now()
    if (now - lastReport < EVICTION_REPORT_INTERVAL_MS) return
    lastReport = now
    const count = evicted
    evicted = 0
    report(
      new WebhookError(
        'dedupe_evicted',
        `The in-memory dedupe store is full: ${count} payload id(s) were forgotten before their ` +
          `time (it holds ${eviction.maxEntries}), so a late retry of one would run its handlers ` +
          'again. Use a shared dedupe store (RedisDedupeStore, PostgresDedupeStore) or raise maxEntries.',
      ),
    )
  })
}

class Endpoint implements WebhookHandler {
  readonly #settings: Settings
  readonly #registry = new HandlerRegistry()
  readonly #errorListeners: WebhookErrorFn[] = []
  readonly path: string
  readonly bodyLimit: number

  constructor(options: SecretSource | WebhookHandlerOptions) {
    const settings = resolveSettings(options)
    this.#settings = settings
    this.path = settings.path
    this.bodyLimit = settings.limit
    const given = options as Partial<WebhookHandlerOptions>
    if (given.on) this.#registry.addMap(given.on)
    if (given.onAny) this.#registry.addAny(given.onAny)
    if (given.onError) this.#errorListeners.push(given.onError)
    if (settings.dedupe instanceof MemoryDedupeStore) {
      watchEvictions(settings.dedupe, (error) => {
        void this.#report(error, { webhookId: undefined, event: undefined })
      })
    }
  }

  // Own properties, bound: `export default { fetch: handler.fetch }` and destructuring work.
  on = <P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): WebhookHandler => {
    for (const p of typeof pattern === 'string' ? [pattern] : pattern) {
      this.#registry.add(p, fn as WebhookHandlerFn)
    }
    return this
  }

  onAny = (fn: WebhookHandlerFn): WebhookHandler => {
    this.#registry.addAny(fn)
    return this
  }

  onError = (fn: WebhookErrorFn): WebhookHandler => {
    this.#errorListeners.push(fn)
    return this
  }

  handle = async (request: WebhookRequest): Promise<WebhookResponse | undefined> => {
    if (normalizePath(request.path) !== this.path) return undefined
    const state: WebhookErrorContext = { webhookId: undefined, event: undefined }
    try {
      return await deliverOnce(
        await receive(request, this.#settings, state),
        this.#settings,
        this.#registry,
      )
    } catch (caught) {
      const error = isWebhookError(caught)
        ? caught
        : new WebhookError(
            'handler_failed',
            'The webhook could not be processed (a secret lookup or dedupe store failed); answered 500 so the service delivers it again.',
            { cause: caught },
          )
      return this.respond(error, state)
    }
  }

  respond = async (
    error: WebhookError,
    context?: Partial<WebhookErrorContext>,
  ): Promise<WebhookResponse> => {
    await this.#report(error, { webhookId: context?.webhookId, event: context?.event })
    return errorAnswer(error)
  }

  fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const answer =
      (await this.handle({
        method: request.method,
        path: url.pathname,
        headers: request.headers,
        body: request.body,
        framework: 'fetch',
      })) ??
      json(404, new WebhookError('not_found', `Nothing is served at ${url.pathname}.`).toJSON())
    return new Response(answer.body, { status: answer.status, headers: answer.headers })
  }

  dispatch = async (event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void> => {
    await this.#registry.dispatch(event, {
      webhookId: context?.webhookId,
      secretIndex: context?.secretIndex ?? 0,
      headers: context?.headers ?? {},
    })
  }

  async #report(error: WebhookError, state: WebhookErrorContext): Promise<void> {
    for (const listener of this.#errorListeners) {
      try {
        await listener(error, state)
      } catch {
        // A failing listener must not change the answer.
      }
    }
  }
}

/**
 * A framework-free webhook endpoint: verifies the signature over the raw bytes, parses the
 * envelope, dedupes retries and runs your handlers, answering with the status codes the
 * service's retry logic needs (see the README's table).
 *
 * @example
 * ```ts
 * const webhooks = createWebhookHandler({
 *   secret: process.env.SCHEDULING_SECRET!,
 *   on: { 'event.created': (event) => book(event.payload) },
 * })
 * // Fetch runtimes (Hono, Next.js, Bun, Deno, Workers):
 * export default { fetch: webhooks.fetch }
 * ```
 */
export function createWebhookHandler(
  secretOrOptions: SecretSource | WebhookHandlerOptions,
): WebhookHandler {
  return new Endpoint(secretOrOptions)
}
