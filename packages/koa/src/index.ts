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
  type WebhookMethods,
} from '@scheduling-kit/core/adapter'
import type { Context, Middleware } from 'koa'

// What an app on this framework uses besides the middleware (the rest, such as the
// framework-free handler and the signature functions, is at @scheduling-kit/core).
export {
  type AnyWebhookEvent,
  createOAuthClient,
  createSchedulingClient,
  createTokenManager,
  type DedupeStore,
  EVENT_TYPES,
  isOAuthFlowError,
  isSchedulingError,
  isWebhookError,
  type Logger,
  MemoryDedupeStore,
  MemoryTokenStore,
  NotConnectedError,
  OAuthFlowError,
  type OAuthRoutes,
  type OAuthRoutesOptions,
  ReauthorizationRequiredError,
  readConnectedKey,
  type SecretSource,
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
        const error = new Error(message.split('\n', 1)[0]) as Error & { status: number }
        error.stack = message
        error.status = 500
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
  const prefix = (options.prefix ?? '/auth/scheduling').replace(/\/+$/, '')
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
