import {
  type BodySource,
  bodyChanged,
  DEFAULT_BODY_TIMEOUT_MS,
  type FrameworkName,
  readBody,
  tooLarge,
} from './body.js'
import { type DedupeStore, type EarlyEviction, MemoryDedupeStore } from './dedupe.js'
import { parseEnvelope } from './envelope.js'
import { ConfigError, isWebhookError, WebhookError } from './errors.js'
import type { AnyWebhookEvent } from './events.js'
import { getHeader, type HeadersInput } from './headers.js'
import {
  type EventPattern,
  type EventsMatching,
  type HandlerMap,
  HandlerRegistry,
  type WebhookContext,
  type WebhookHandlerFn,
} from './registry.js'
import { assertSecretSource, resolveSecrets, type SecretSource, staticSecrets } from './secrets.js'
import {
  checkSignature,
  DEFAULT_SIGNATURE_HEADER,
  DEFAULT_WEBHOOK_ID_HEADER,
  type HeaderNames,
  isThenable,
  rejectSignature,
  requireSignature,
} from './verify.js'

export const DEFAULT_WEBHOOK_PATH = '/webhooks/scheduling'
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/** A durable queue: the event is answered 200 once `enqueue` resolves, 503 if it rejects. */
export interface WebhookQueue {
  enqueue(event: AnyWebhookEvent, context: WebhookContext): unknown | Promise<unknown>
}

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

export interface WebhookHandlerOptions extends HeaderNames {
  /** The signing secret, several while rotating, or a lookup `(webhookId) => secret`. */
  secret: SecretSource
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
  /** Largest body accepted, in bytes; enforced while reading. Default 1 MiB. */
  bodyLimit?: number
  /** How long a body may take to arrive, in ms: past it, 408 and the connection is closed. Default 30 000. */
  bodyTimeoutMs?: number
}

/** A request in plain data, as an adapter gives it. */
export interface WebhookRequest {
  method: string
  /** Path (a query string is ignored), relative to where the handler is mounted. */
  path: string
  headers: HeadersInput
  /** The raw body or a stream of it. An object means a body parser got there first. */
  body: BodySource | object
  /** The adapter's framework, for advice in error messages. */
  framework?: FrameworkName
}

/** The answer in plain data, for an adapter to write back. */
export interface WebhookResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export interface WebhookHandler {
  /** The path this handler answers. */
  readonly path: string
  /** Adds a handler for an event type, several types, a prefix pattern (`event.checkout.*`) or `*`. */
  on<P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): WebhookHandler
  /** Adds a handler for every event, known or not. */
  onAny(fn: WebhookHandlerFn): WebhookHandler
  /** Adds a listener told of every error answer. */
  onError(fn: WebhookErrorFn): WebhookHandler
  /** Answers one request, or resolves to `undefined` when its path is not this handler's. */
  handle(request: WebhookRequest): Promise<WebhookResponse | undefined>
  /** Serves a Fetch `Request` (Hono, Next.js, Bun, Deno, Workers); 404 off its path. */
  fetch(request: Request): Promise<Response>
  /** Runs the matching handlers for an event, e.g. when a queue consumer takes it. */
  dispatch(event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void>
  /** The body limit in force, in bytes. */
  readonly bodyLimit: number
  /**
   * The answer to an error an adapter met before `handle` could (its framework refused a body
   * over the limit, say): reported to `onError` like any other.
   */
  respond(error: WebhookError, context?: Partial<WebhookErrorContext>): Promise<WebhookResponse>
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' }

function json(status: number, value: unknown, extra?: Record<string, string>): WebhookResponse {
  return { status, headers: { ...JSON_HEADERS, ...extra }, body: JSON.stringify(value) }
}

const RECEIVED_BODY = JSON.stringify({ received: true })
const DUPLICATE_BODY = JSON.stringify({ received: true, duplicate: true })
// A fresh object per answer: adapters and apps may add headers to it.
const received = (body: string): WebhookResponse => ({
  status: 200,
  headers: { ...JSON_HEADERS },
  body,
})

function normalizePath(path: string): string {
  if (path.length > 1 && path.indexOf('?') < 0 && !path.endsWith('/')) return path
  const q = path.indexOf('?')
  let p = q >= 0 ? path.slice(0, q) : path
  if (p === '') p = '/'
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1)
  return p
}

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined) return false
  if (value === 'application/json') return true
  const type = value.split(';', 1)[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

function normalizeOptions(input: SecretSource | WebhookHandlerOptions): WebhookHandlerOptions {
  const options =
    typeof input === 'string' || typeof input === 'function' || Array.isArray(input)
      ? { secret: input as SecretSource }
      : (input as WebhookHandlerOptions | undefined)
  if (options === undefined || options === null || typeof options !== 'object') {
    throw new ConfigError('createWebhookHandler: pass the signing secret or an options object.')
  }
  assertSecretSource(options.secret, 'createWebhookHandler')
  if (
    options.path !== undefined &&
    (typeof options.path !== 'string' || !options.path.startsWith('/'))
  ) {
    throw new ConfigError(
      `createWebhookHandler: path must start with "/", got "${String(options.path)}".`,
    )
  }
  const limit = options.bodyLimit
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    throw new ConfigError(
      'createWebhookHandler: bodyLimit must be a positive whole number of bytes.',
    )
  }
  const timeout = options.bodyTimeoutMs
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && timeout > 0)) {
    throw new ConfigError(
      'createWebhookHandler: bodyTimeoutMs must be a positive whole number of milliseconds.',
    )
  }
  if (options.queue !== undefined && typeof options.queue?.enqueue !== 'function') {
    throw new ConfigError('createWebhookHandler: queue must have an enqueue(event) method.')
  }
  return options
}

/**
 * A framework-free webhook endpoint: verifies the signature over the raw bytes, parses the
 * envelope, dedupes retries and runs your handlers, answering with the status codes the
 * service's retry logic needs (see the README's table).
 */
export function createWebhookHandler(
  secretOrOptions: SecretSource | WebhookHandlerOptions,
): WebhookHandler {
  const options = normalizeOptions(secretOrOptions)
  const path = normalizePath(options.path ?? DEFAULT_WEBHOOK_PATH)
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS
  const dedupe = options.dedupe === false ? undefined : (options.dedupe ?? new MemoryDedupeStore())
  // Only a lookup by webhook id ties the id header to the signature: with a fixed secret the
  // header is not covered by anything, so the key is the signed payload id alone.
  const keyedByWebhookId = typeof options.secret === 'function'
  const registry = new HandlerRegistry()
  const errorListeners: WebhookErrorFn[] = []
  if (options.on) registry.addMap(options.on)
  if (options.onAny) registry.addAny(options.onAny)
  if (options.onError) errorListeners.push(options.onError)

  const signatureHeader = options.signatureHeader ?? DEFAULT_SIGNATURE_HEADER
  const webhookIdHeader = options.webhookIdHeader ?? DEFAULT_WEBHOOK_ID_HEADER
  const fixedSecrets = staticSecrets(options.secret)

  // An in-memory store that forgets an id before its time can let a late retry run handlers
  // twice: the app hears of it through onError, at most once a minute.
  let lastEvictionReport = Number.NEGATIVE_INFINITY
  let evictedSinceReport = 0
  if (dedupe instanceof MemoryDedupeStore) {
    dedupe.onEarlyEviction((eviction: EarlyEviction) => {
      evictedSinceReport += eviction.count
      const now = Date.now()
      if (now - lastEvictionReport < 60_000) return
      lastEvictionReport = now
      const count = evictedSinceReport
      evictedSinceReport = 0
      void report(
        new WebhookError(
          'dedupe_evicted',
          `The in-memory dedupe store is full: ${count} payload id(s) were forgotten before their ` +
            `time (it holds ${eviction.maxEntries}), so a late retry of one would run its handlers ` +
            'again. Use a shared dedupe store (RedisDedupeStore, PostgresDedupeStore) or raise maxEntries.',
        ),
        { webhookId: undefined, event: undefined },
      )
    })
  }

  function enqueueFailed(event: AnyWebhookEvent, cause: unknown): WebhookError {
    return new WebhookError(
      'queue_rejected',
      `The queue did not accept ${event.type} (${event.id}); answered 503 so the service delivers it again.`,
      { cause },
    )
  }

  /** Hands the event to the queue or the handlers; a promise only when one of them is async. */
  function deliver(event: AnyWebhookEvent, context: WebhookContext): void | Promise<void> {
    if (options.queue === undefined) return registry.dispatch(event, context)
    let queued: unknown
    try {
      queued = options.queue.enqueue(event, context)
    } catch (cause) {
      throw enqueueFailed(event, cause)
    }
    if (isThenable(queued)) {
      return Promise.resolve(queued).then(
        () => {},
        (cause) => {
          throw enqueueFailed(event, cause)
        },
      )
    }
  }

  // The hot path awaits only what is really asynchronous (a stream, a secret lookup, Web Crypto,
  // an async store or handler): each needless await costs a turn of the microtask queue.
  async function accept(
    request: WebhookRequest,
    state: WebhookErrorContext,
  ): Promise<WebhookResponse> {
    if (request.method.toUpperCase() !== 'POST') {
      throw new WebhookError('method_not_allowed', `Only POST is accepted on ${path}.`)
    }
    if (!isJsonContentType(getHeader(request.headers, 'content-type'))) {
      throw new WebhookError(
        'unsupported_media_type',
        'Webhooks are sent as application/json; this request has another content type.',
      )
    }
    const encoding = getHeader(request.headers, 'content-encoding')
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      // The signature covers the bytes sent; a decoded body is not them.
      throw new WebhookError(
        'unsupported_media_type',
        'Webhooks are sent without a Content-Encoding; the signature covers the bytes as sent.',
      )
    }
    const declared = Number(getHeader(request.headers, 'content-length'))
    if (declared > limit) throw tooLarge(limit)
    const signature = requireSignature(request.headers, signatureHeader)
    const webhookId = getHeader(request.headers, webhookIdHeader)
    state.webhookId = webhookId
    const raw = request.body
    const body =
      raw instanceof Uint8Array && raw.length <= limit
        ? raw
        : await readBody(raw, limit, request.framework, bodyTimeoutMs)
    // Text or bytes a parser kept must be the bytes received: the same length at least.
    if (
      (typeof raw === 'string' || raw instanceof Uint8Array) &&
      declared >= 0 &&
      body.length !== declared
    ) {
      throw bodyChanged(declared, body.length, request.framework)
    }
    const secrets =
      fixedSecrets ?? (await resolveSecrets(options.secret, webhookId, webhookIdHeader))
    const checked = checkSignature(body, signature, secrets)
    const secretIndex = isThenable(checked) ? await checked : checked
    if (secretIndex < 0) await rejectSignature(body, signature, secrets, signatureHeader)
    const event = parseEnvelope(body)
    state.event = event
    const context: WebhookContext = { webhookId, secretIndex, headers: request.headers }
    if (dedupe === undefined) {
      const delivered = deliver(event, context)
      if (delivered) await delivered
      return received(RECEIVED_BODY)
    }
    const key = keyedByWebhookId ? `${webhookId ?? ''}:${event.id}` : event.id
    const claimed = dedupe.claim(key)
    const claim = isThenable(claimed) ? await claimed : claimed
    if (claim === 'completed') return received(DUPLICATE_BODY)
    if (claim === 'in_progress') {
      throw new WebhookError(
        'delivery_in_progress',
        `${event.id} is being handled by an earlier delivery; answered 409 so the service tries again later.`,
      )
    }
    try {
      const delivered = deliver(event, context)
      if (delivered) await delivered
    } catch (error) {
      const released = dedupe.release(key)
      if (isThenable(released)) await released
      throw error
    }
    const completed = dedupe.complete(key)
    if (isThenable(completed)) await completed
    return received(RECEIVED_BODY)
  }

  async function report(error: WebhookError, state: WebhookErrorContext): Promise<void> {
    for (const listener of errorListeners) {
      try {
        await listener(error, state)
      } catch {
        // A failing listener must not change the answer.
      }
    }
  }

  const handler: WebhookHandler = {
    path,
    on(pattern, fn) {
      for (const p of typeof pattern === 'string' ? [pattern] : pattern) {
        registry.add(p, fn as WebhookHandlerFn)
      }
      return handler
    },
    onAny(fn) {
      registry.addAny(fn)
      return handler
    },
    onError(fn) {
      errorListeners.push(fn)
      return handler
    },
    async handle(request) {
      if (normalizePath(request.path) !== path) return undefined
      const state: WebhookErrorContext = { webhookId: undefined, event: undefined }
      try {
        return await accept(request, state)
      } catch (caught) {
        const error = isWebhookError(caught)
          ? caught
          : new WebhookError(
              'handler_failed',
              'The webhook could not be processed (a secret lookup or dedupe store failed); answered 500 so the service delivers it again.',
              { cause: caught },
            )
        return handler.respond(error, state)
      }
    },
    bodyLimit: limit,
    async respond(error, context) {
      await report(error, { webhookId: context?.webhookId, event: context?.event })
      const extra: Record<string, string> = {}
      if (error.code === 'method_not_allowed') extra.allow = 'POST'
      // The rest of the body is not read: the connection cannot carry another request.
      if (error.code === 'payload_too_large' || error.code === 'body_timeout')
        extra.connection = 'close'
      return json(error.status, error.toJSON(), extra)
    },
    async fetch(request) {
      const url = new URL(request.url)
      const answer =
        (await handler.handle({
          method: request.method,
          path: url.pathname,
          headers: request.headers,
          body: request.body,
          framework: 'fetch',
        })) ??
        json(404, new WebhookError('not_found', `Nothing is served at ${url.pathname}.`).toJSON())
      return new Response(answer.body, { status: answer.status, headers: answer.headers })
    },
    async dispatch(event, context) {
      await registry.dispatch(event, {
        webhookId: context?.webhookId,
        secretIndex: context?.secretIndex ?? 0,
        headers: context?.headers ?? {},
      })
    },
  }
  return handler
}

/** Handler registration on an adapter's middleware; each method returns the middleware. */
export interface WebhookMethods<Self> {
  on<P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): Self
  onAny(fn: WebhookHandlerFn): Self
  onError(fn: WebhookErrorFn): Self
  /** The core handler, for `dispatch()` from a queue consumer. */
  readonly handler: WebhookHandler
}

/** Gives an adapter's middleware `on`, `onAny`, `onError` and `handler`, delegating to core. */
export function attachWebhookMethods<Self extends WebhookMethods<Self>>(
  target: object,
  handler: WebhookHandler,
): Self {
  const self = target as Self
  const methods: WebhookMethods<Self> = {
    handler,
    on(pattern, fn) {
      handler.on(pattern, fn)
      return self
    },
    onAny(fn) {
      handler.onAny(fn)
      return self
    },
    onError(fn) {
      handler.onError(fn)
      return self
    },
  }
  return Object.assign(target, methods) as Self
}
