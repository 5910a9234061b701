import type { IncomingMessage } from 'node:http'
import type {
  OAuthResponse,
  OAuthRoutes,
  OAuthRoutesOptions,
  SecretSource,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
  WebhookRequest,
  WebhookResponse,
} from '@scheduling-kit/core'
import { createOAuthRoutes, createWebhookHandler } from '@scheduling-kit/core'
import { attachWebhookMethods, type WebhookMethods } from '@scheduling-kit/core/adapter'
import { H3, type H3Event, type Middleware } from 'h3'

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

export interface SchedulingOAuthApp extends H3 {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(event: H3Event): Promise<string | undefined>
  readonly routes: OAuthRoutes<H3Event>
}

type NodeRequest = IncomingMessage & { rawBody?: unknown }

/**
 * Where the body comes from. On Node, the Node request itself while nothing has touched it:
 * reading it by its events costs a third of the CPU of h3's Web stream over it. A raw body an
 * earlier Node middleware kept is used as it is. Otherwise (another runtime, or something
 * already opened the Web stream) the Web body, with h3's word on whether it was read.
 */
function bodyOf(
  event: H3Event,
  node: NodeRequest | undefined,
): Pick<WebhookRequest, 'body' | 'bodyUsed'> {
  if (node !== undefined) {
    if (node.rawBody instanceof Uint8Array) return { body: node.rawBody }
    if (event.req.bodyUsed || node.readableDidRead) return { body: null, bodyUsed: true }
    // A stream nobody listens to yet: no byte has gone elsewhere.
    if (node.readableFlowing === null) return { body: node }
  }
  return { body: event.req.body, bodyUsed: event.req.bodyUsed }
}

/**
 * Writes core's answer the way h3 builds its own: status and headers on `event.res`, the body
 * returned as text. On Node, h3 then writes it straight to the socket, with no Web `Response`
 * (and no stream to read back out of one) in between.
 */
function send(event: H3Event, answer: WebhookResponse | OAuthResponse): string {
  event.res.status = answer.status
  const headers = event.res.headers
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one)
    else headers.set(name, value)
  }
  return answer.body
}

/**
 * `app.use(schedulingWebhooks(secret))`: answers `POST /webhooks/scheduling` (option `path`,
 * relative to a mounted sub-app) and passes every other request on untouched.
 *
 * @example
 * ```ts
 * app.use(schedulingWebhooks(process.env.SCHEDULING_SECRET!).on('event.*', (event) => log(event.type)))
 * ```
 */
export function schedulingWebhooks(
  secretOrOptions: SecretSource | WebhookHandlerOptions,
  options?: WebhookHandlerRestOptions,
): SchedulingWebhooksMiddleware {
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware: Middleware = async (event, next) => {
    const node = event.runtime?.node?.req as NodeRequest | undefined
    const answer = await handler.handle({
      method: event.req.method,
      path: event.url.pathname,
      // On Node, the Node request's own header record (no wrapper between).
      headers: node?.headers ?? event.req.headers,
      ...bodyOf(event, node),
      framework: 'h3',
    })
    return answer ? send(event, answer) : next()
  }
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}

/**
 * The mount path, as sent, of a request whose full path is `full` and whose path inside the
 * sub-app is `inner`: the segments of `full` before as many as `inner` has. Counted in segments,
 * not characters, since one of them may be percent-encoded (`%6Cogin`) and the other not.
 */
function mountPathOf(full: string, inner: string): string {
  const depth = inner.split('/').length - 1
  let end = full.length
  for (let i = 0; i < depth && end > 0; i++) end = full.lastIndexOf('/', end - 1)
  return end <= 0 ? '' : full.slice(0, end)
}

/**
 * `app.mount('/auth/scheduling', schedulingOAuth(options))`: a sub-app with `GET /login`,
 * `GET /callback` and `POST /disconnect`.
 *
 * @example
 * ```ts
 * app.mount('/auth/scheduling', schedulingOAuth({
 *   clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * }))
 * ```
 */
export function schedulingOAuth(options: OAuthRoutesOptions<H3Event>): SchedulingOAuthApp {
  const routes = createOAuthRoutes<H3Event>(options)
  const app = new H3().use(async (event, next) => {
    // Inside a mounted sub-app h3 strips the base from event.url. On Node, event.req.url follows
    // it, so the original request line is read from the Node request; elsewhere req.url keeps it.
    const full = new URL(event.runtime?.node?.req?.url ?? event.req.url, 'http://h3.invalid')
      .pathname
    const answer = await routes.handle({
      method: event.req.method,
      path: event.url.pathname + event.url.search,
      headers: event.req.headers,
      mountPath: mountPathOf(full, event.url.pathname),
      raw: event,
    })
    return answer ? send(event, answer) : next()
  })
  return Object.assign(app, {
    routes,
    connectedKey: (event: H3Event) => routes.connectedKey(event.req.headers),
  })
}
