import type {
  Logger,
  OAuthResponse,
  OAuthRoutes,
  OAuthRoutesOptions,
  SecretSource,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
  WebhookResponse,
} from '@scheduling-kit/core'
import { createOAuthRoutes, createWebhookHandler } from '@scheduling-kit/core'
import {
  attachWebhookMethods,
  type BodySource,
  consoleLogger,
  Summarizer,
  serverText,
  type WebhookMethods,
  withoutTrailingSlashes,
} from '@scheduling-kit/core/adapter'
import type { Context, Middleware } from 'koa'

// What an app on this framework uses besides the middleware (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export {
  type AnyWebhookEvent,
  createCredentialCipher,
  createOAuthClient,
  createSchedulingClient,
  createTokenManager,
  createWebhookSubscriptions,
  type DedupeStore,
  EVENT_TYPES,
  isApiError,
  isOAuthFlowError,
  isSchedulingError,
  isWebhookError,
  type Logger,
  MemoryDedupeStore,
  MemorySubscriptionStore,
  MemoryTokenStore,
  NotConnectedError,
  OAuthFlowError,
  type OAuthRoutes,
  type OAuthRoutesOptions,
  ReauthorizationRequiredError,
  readConnectedKey,
  type SecretSource,
  type SubscriptionStore,
  type TokenRecord,
  type TokenStore,
  type WebhookContext,
  WebhookError,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHandler,
  type WebhookHandlerFn,
  type WebhookHandlerOptions,
  type WebhookQueue,
  type WebhookSubscriptions,
} from '@scheduling-kit/core'

export interface SchedulingWebhooksMiddleware
  extends Middleware,
    WebhookMethods<SchedulingWebhooksMiddleware> {}

export interface SchedulingOAuthOptions extends OAuthRoutesOptions<Context> {
  /** Where the routes live. Default `/auth/scheduling`. */
  prefix?: string
}

export interface SchedulingOAuthMiddleware extends Middleware {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(ctx: Context): Promise<string | undefined>
  readonly routes: OAuthRoutes<Context>
}

/**
 * The bytes to verify: the request stream while nobody has read it (a parser placed first
 * leaves types it does not parse, such as `application/foo+json`, unread), else
 * @koa/bodyparser's `rawBody`, else what a parser left (core then answers `body_parsed`).
 */
function bodyOf(ctx: Context): BodySource | object {
  const req = ctx.req
  if (!req.readableDidRead && !req.readableEnded) return req
  const request = ctx.request as Context['request'] & { rawBody?: unknown; body?: unknown }
  if (typeof request.rawBody === 'string') return request.rawBody
  const body = request.body
  return typeof body === 'string' || body instanceof Uint8Array ? body : ((body as object) ?? {})
}

const appLoggers = new WeakMap<Context['app'], Logger>()
/** Marks the errors this adapter hands to the app's `error` event itself. */
const OWN_ERROR = Symbol('scheduling-kit')
const watchedApps = new WeakSet<Context['app']>()

/**
 * A body parser mounted before the middleware refuses a malformed webhook body itself, and
 * Koa's default `error` listener prints each refusal's stack: a sender could flood the log.
 * When that default is the app's only listener, refusals (4xx) on the webhook path are
 * summarised like the middleware's own (the first in full, then a count once a minute); every
 * other error still reaches Koa's listener. From the first request the middleware sees.
 */
function summariseParserRefusals(app: Context['app'], path: string): void {
  if (watchedApps.has(app)) return
  watchedApps.add(app)
  const listeners = app.listeners('error')
  if (listeners.length !== 1 || listeners[0] !== app.onerror) return
  const summaries = new Summarizer()
  app.removeListener('error', app.onerror)
  app.on('error', (error: { status?: unknown; message?: unknown }, ctx?: Context) => {
    const status = error?.status
    const refused =
      typeof status === 'number' &&
      status >= 400 &&
      status < 500 &&
      // The path as mounted (koa-mount strips its prefix only inside).
      (ctx?.path === path || ctx?.path.endsWith(path) === true)
    if (!refused || (error as Record<symbol, unknown>)[OWN_ERROR])
      return app.onerror(error as Error)
    summaries.note(
      consoleLogger,
      'warn',
      `parser-${status}`,
      `scheduling-kit: a body parser mounted before schedulingWebhooks() answered ${status} on ${path} ` +
        `(${serverText(String(error.message), 200)}). Mount schedulingWebhooks() before the body parser.\n` +
        `(Further ${status} answers of the parser on ${path} are counted and reported once a minute.)`,
      (count) =>
        `scheduling-kit: ${count} more request(s) on ${path} answered ${status} by a body parser in the last minute.`,
    )
  })
}

/**
 * Koa's way to report errors: errors go to the app's `error` event (Koa prints their stack
 * unless you listen to it), the rest to the console.
 */
function koaLogger(ctx: Context): Logger {
  const app = ctx.app
  let logger = appLoggers.get(app)
  if (logger === undefined) {
    logger = {
      ...consoleLogger,
      error(message) {
        const error = new Error(message.split('\n', 1)[0]) as Error & {
          status: number
          [OWN_ERROR]: true
        }
        error.stack = message
        error.status = 500
        error[OWN_ERROR] = true
        app.emit('error', error)
      },
    }
    appLoggers.set(app, logger)
  }
  return logger
}

function send(ctx: Context, answer: WebhookResponse | OAuthResponse): void {
  ctx.status = answer.status
  ctx.set(answer.headers)
  ctx.body = answer.body
}

/**
 * `app.use(schedulingWebhooks(secret))`: answers `POST /webhooks/scheduling` (option `path`)
 * and passes every other request on untouched.
 *
 * @example
 * ```ts
 * app.use(schedulingWebhooks(process.env.SCHEDULING_SECRET!).on('event.canceled', (event) => cancel(event.payload)))
 * app.use(bodyParser()) // after: the webhooks middleware reads the raw stream first
 * ```
 */
export function schedulingWebhooks(
  secretOrOptions: SecretSource | WebhookHandlerOptions,
  options?: WebhookHandlerRestOptions,
): SchedulingWebhooksMiddleware {
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware = (async (ctx, next) => {
    summariseParserRefusals(ctx.app, handler.path)
    const answer = await handler.handle({
      method: ctx.method,
      path: ctx.url,
      headers: ctx.headers,
      body: bodyOf(ctx),
      framework: 'koa',
      logger: koaLogger(ctx),
    })
    if (answer) send(ctx, answer)
    else await next()
  }) as Middleware
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}

/**
 * `app.use(schedulingOAuth({ prefix: '/auth/scheduling', ... }))`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix.
 *
 * @example
 * ```ts
 * app.use(schedulingOAuth({
 *   prefix: '/auth/scheduling', clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * }))
 * ```
 */
export function schedulingOAuth(options: SchedulingOAuthOptions): SchedulingOAuthMiddleware {
  const routes = createOAuthRoutes<Context>(options)
  const prefix = withoutTrailingSlashes(options.prefix ?? '/auth/scheduling')
  const middleware = (async (ctx, next) => {
    const inside = ctx.path === prefix || ctx.path.startsWith(`${prefix}/`)
    const answer = inside
      ? await routes.handle({
          method: ctx.method,
          path: ctx.url.slice(prefix.length) || '/',
          headers: ctx.headers,
          mountPath: prefix,
          raw: ctx,
          logger: koaLogger(ctx),
        })
      : undefined
    if (answer) send(ctx, answer)
    else await next()
  }) as SchedulingOAuthMiddleware
  return Object.assign(middleware, {
    routes,
    connectedKey: (ctx: Context) => routes.connectedKey(ctx.headers),
  })
}
