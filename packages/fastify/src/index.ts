import type {
  Logger,
  OAuthResponse,
  OAuthRoutes,
  OAuthRoutesOptions,
  SecretSource,
  WebhookHandlerOptions,
  WebhookResponse,
} from '@scheduling-kit/core'
import { ConfigError, createOAuthRoutes, createWebhookHandler } from '@scheduling-kit/core'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The key of the scheduling account this browser connected (from its signed cookie), or
     * `undefined`. Added by `schedulingOAuth` to the requests of the context it is registered in.
     */
    schedulingConnectedKey(): Promise<string | undefined>
  }
}

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

export type SchedulingWebhooksOptions = WebhookHandlerOptions
export interface SchedulingOAuthOptions extends OAuthRoutesOptions<FastifyRequest> {
  /** Where the routes live, as Fastify's `prefix` register option. Default: none. */
  prefix?: string
}

const ALL_METHODS = ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT']

/**
 * The request's own logger (it carries the request id) when the app has Fastify's logger on;
 * `undefined` (core then uses the console) when it is off, so failures are not swallowed.
 */
function requestLogger(request: FastifyRequest): Logger | undefined {
  return typeof request.log?.level === 'string' ? (request.log as unknown as Logger) : undefined
}

function send(reply: FastifyReply, answer: WebhookResponse | OAuthResponse): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body)
}

/** Body parsers of this plugin only (it is encapsulated): the raw stream goes to core untouched. */
function keepRawStream(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
}

/**
 * `app.register(schedulingWebhooks, { secret })`: answers `POST /webhooks/scheduling` (option
 * `path`, under the register prefix). Encapsulated: its body parser does not reach other routes.
 *
 * @example
 * ```ts
 * await app.register(schedulingWebhooks, {
 *   secret: process.env.SCHEDULING_SECRET!,
 *   on: { 'event.created': (event) => book(event.payload) },
 * })
 * ```
 */
export const schedulingWebhooks: FastifyPluginAsync<
  SchedulingWebhooksOptions | { secret: SecretSource }
> = async (fastify, options) => {
  const handler = createWebhookHandler(options as SchedulingWebhooksOptions)
  // Every body reaches core as the raw stream: core enforces bodyLimit and bodyTimeoutMs while
  // reading, and verifies the bytes as received.
  keepRawStream(fastify)
  const route = async (request: FastifyRequest, reply: FastifyReply) => {
    const answer = await handler.handle({
      method: request.method,
      path: handler.path,
      headers: request.headers,
      body: request.body ?? request.raw,
      framework: 'fastify',
      logger: requestLogger(request),
    })
    return send(reply, answer!)
  }
  // The path with and without a trailing slash, as core answers it on every other framework.
  for (const url of handler.path === '/' ? ['/'] : [handler.path, `${handler.path}/`]) {
    fastify.route({ method: ALL_METHODS, url, handler: route })
  }
}

const OAUTH_PATHS = ['/login', '/callback', '/disconnect']

/** The OAuth routes as an encapsulated plugin: their own raw-body parser, their own paths. */
function oauthRoutes(routes: OAuthRoutes<FastifyRequest>): FastifyPluginAsync {
  return async (fastify) => {
    keepRawStream(fastify)
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const answer = await routes.handle({
        method: request.method,
        path: request.url.slice(fastify.prefix.length) || '/',
        headers: request.headers,
        mountPath: fastify.prefix,
        raw: request,
        logger: requestLogger(request),
      })
      return answer ? send(reply, answer) : reply.callNotFound()
    }
    // Each route with every method: core answers a wrong one 405 with its Allow header.
    for (const path of OAUTH_PATHS) {
      for (const url of [path, `${path}/`]) fastify.route({ method: ALL_METHODS, url, handler })
    }
  }
}

/**
 * `app.register(schedulingOAuth, { prefix: '/auth/scheduling', ... })`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix, and
 * `request.schedulingConnectedKey()` on the requests of the context it is registered in (the
 * routes stay encapsulated; the decorator is not).
 *
 * @example
 * ```ts
 * await app.register(schedulingOAuth, {
 *   prefix: '/auth/scheduling', clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * })
 * app.get('/me', async (request) => ({ key: await request.schedulingConnectedKey() }))
 * ```
 */
export const schedulingOAuth: FastifyPluginAsync<SchedulingOAuthOptions> = Object.assign(
  async (fastify: FastifyInstance, options: SchedulingOAuthOptions) => {
    if (typeof options?.cookieSecret !== 'string' || options.cookieSecret === '') {
      throw new ConfigError(
        'schedulingOAuth: cookieSecret is required: 32+ random characters, the same in every ' +
          'process (it signs the sign-in and connection cookies), e.g. process.env.COOKIE_SECRET.',
      )
    }
    const { prefix, ...rest } = options
    const routes = createOAuthRoutes<FastifyRequest>(rest)
    fastify.decorateRequest('schedulingConnectedKey', function (this: FastifyRequest) {
      return routes.connectedKey(this.headers)
    })
    await fastify.register(oauthRoutes(routes), { prefix: prefix ?? '' })
  },
  // Like fastify-plugin: the decorator reaches the app's routes; the routes get their own
  // encapsulated context, with the prefix, from the register call above.
  { [Symbol.for('skip-override')]: true },
)
