import type {
  OAuthResponse,
  OAuthRoutesOptions,
  SecretSource,
  WebhookHandlerOptions,
  WebhookResponse,
} from '@scheduling-kit/core'
import { createOAuthRoutes, createWebhookHandler } from '@scheduling-kit/core'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

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

export type SchedulingWebhooksOptions = WebhookHandlerOptions
export type SchedulingOAuthOptions = OAuthRoutesOptions<FastifyRequest>

const ALL_METHODS = ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT']

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
    })
    return send(reply, answer!)
  }
  // The path with and without a trailing slash, as core answers it on every other framework.
  for (const url of handler.path === '/' ? ['/'] : [handler.path, `${handler.path}/`]) {
    fastify.route({ method: ALL_METHODS, url, handler: route })
  }
}

/**
 * `app.register(schedulingOAuth, { prefix: '/auth/scheduling', ... })`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix.
 *
 * @example
 * ```ts
 * await app.register(schedulingOAuth, {
 *   prefix: '/auth/scheduling', clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * })
 * ```
 */
export const schedulingOAuth: FastifyPluginAsync<SchedulingOAuthOptions> = async (
  fastify,
  options,
) => {
  const routes = createOAuthRoutes<FastifyRequest>(options)
  keepRawStream(fastify)
  fastify.route({
    method: ALL_METHODS,
    url: '/*',
    handler: async (request, reply) => {
      const answer = await routes.handle({
        method: request.method,
        path: request.url.slice(fastify.prefix.length) || '/',
        headers: request.headers,
        mountPath: fastify.prefix,
        raw: request,
      })
      return answer ? send(reply, answer) : reply.callNotFound()
    },
  })
}
