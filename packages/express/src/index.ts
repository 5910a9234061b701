import type {
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
  type WebhookMethods,
} from '@scheduling-kit/core/adapter'
import type { NextFunction, Request, Response } from 'express'

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

type Middleware = (req: Request, res: Response, next: NextFunction) => void

/** Express's own options besides core's. */
export interface ExpressWebhookOptions {
  /**
   * Hands server errors (a handler threw: 500; the queue refused: 503) to `next(err)`, so your
   * error middleware logs and answers them (`err.status` is the status the service needs to
   * retry; `err.cause` is what threw). Default false: the middleware answers and logs them.
   */
  forwardErrors?: boolean
}

export type SchedulingWebhooksOptions = WebhookHandlerOptions & ExpressWebhookOptions

export interface SchedulingWebhooksMiddleware
  extends Middleware,
    WebhookMethods<SchedulingWebhooksMiddleware> {}

export interface SchedulingOAuthMiddleware extends Middleware {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(req: Request): Promise<string | undefined>
  readonly routes: OAuthRoutes<Request>
}

/**
 * Keeps the raw bytes for the webhook middleware when a JSON parser runs first:
 * `app.use(express.json({ verify: keepRawBody }))`.
 *
 * @example
 * ```ts
 * app.use(express.json({ verify: keepRawBody }))
 * app.use(schedulingWebhooks(process.env.SCHEDULING_SECRET!))
 * ```
 */
export function keepRawBody(req: Request, _res: Response, buf: Buffer): void {
  ;(req as Request & { rawBody?: Buffer }).rawBody = buf
}

/** The bytes to verify: a captured raw body, the unread stream, or what a parser left. */
function bodyOf(req: Request): BodySource | object {
  if (!req.readableDidRead && !req.readableEnded) return req
  const raw = (req as Request & { rawBody?: unknown }).rawBody
  if (typeof raw === 'string' || raw instanceof Uint8Array) return raw
  const body: unknown = req.body
  return typeof body === 'string' || body instanceof Uint8Array ? body : ((body as object) ?? {})
}

/**
 * Writes core's answer, or passes on when there is none. An error while writing (a broken
 * socket, headers already sent by an earlier middleware) goes to Express's error path, never
 * to an unhandled rejection.
 */
function answerWith(
  res: Response,
  next: NextFunction,
): (answer: WebhookResponse | OAuthResponse | undefined) => void {
  return (answer) => {
    if (answer === undefined) return next()
    try {
      // With its length given, Node sends the answer whole rather than chunked.
      const headers: Record<string, string | string[]> = answer.headers
      headers['content-length'] ??= String(Buffer.byteLength(answer.body))
      res.writeHead(answer.status, headers).end(answer.body)
    } catch (error) {
      next(error)
    }
  }
}

/**
 * `app.use(schedulingWebhooks(secret))`: answers `POST /webhooks/scheduling` (option `path`,
 * relative to where it is mounted) and passes every other request on untouched.
 *
 * @example
 * ```ts
 * app.use(
 *   schedulingWebhooks(process.env.SCHEDULING_SECRET!).on('event.created', async (event) => {
 *     await bookings.add(event.payload)
 *   }),
 * )
 * ```
 */
export function schedulingWebhooks(
  secretOrOptions: SecretSource | SchedulingWebhooksOptions,
  options?: WebhookHandlerRestOptions & ExpressWebhookOptions,
): SchedulingWebhooksMiddleware {
  const own = (options ?? (typeof secretOrOptions === 'object' ? secretOrOptions : undefined)) as
    | ExpressWebhookOptions
    | undefined
  const forwardErrors = own?.forwardErrors === true
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware = ((req, res, next) => {
    const write = answerWith(res, next)
    handler
      .handle({
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: bodyOf(req),
        framework: 'express',
        errorsToFramework: forwardErrors,
      })
      .then(
        forwardErrors
          ? (answer) =>
              answer?.error !== undefined && answer.status >= 500
                ? next(answer.error)
                : write(answer)
          : write,
        next,
      )
  }) as Middleware
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}

/**
 * `app.use('/auth/scheduling', schedulingOAuth(options))`: `GET /login`, `GET /callback` and
 * `POST /disconnect` under the mount path.
 *
 * @example
 * ```ts
 * app.use('/auth/scheduling', schedulingOAuth({
 *   clientId, clientSecret, authUrl, redirectUri: 'https://app.example.com/auth/scheduling/callback',
 *   tokenStore, cookieSecret: process.env.COOKIE_SECRET,
 * }))
 * ```
 */
export function schedulingOAuth(options: OAuthRoutesOptions<Request>): SchedulingOAuthMiddleware {
  const routes = createOAuthRoutes<Request>(options)
  const middleware = ((req, res, next) => {
    routes
      .handle({
        method: req.method,
        path: req.url,
        headers: req.headers,
        mountPath: req.baseUrl,
        raw: req,
      })
      .then(answerWith(res, next), next)
  }) as SchedulingOAuthMiddleware
  return Object.assign(middleware, {
    routes,
    connectedKey: (req: Request) => routes.connectedKey(req.headers),
  })
}
