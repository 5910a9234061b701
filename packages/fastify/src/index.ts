import type {
  OAuthResponse,
  OAuthRoutesOptions,
  SecretSource,
  WebhookHandlerOptions,
  WebhookResponse,
} from '@scheduling-kit/core'
import { createOAuthRoutes, createWebhookHandler, payloadTooLargeError } from '@scheduling-kit/core'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'

export * from '@scheduling-kit/core'

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
 */
export const schedulingWebhooks: FastifyPluginAsync<
  SchedulingWebhooksOptions | { secret: SecretSource }
> = async (fastify, options) => {
  const handler = createWebhookHandler(options as SchedulingWebhooksOptions)
  keepRawStream(fastify)
  // JSON bodies are collected by Fastify (cheaper than a stream), under core's limit; a body over
  // it gets core's 413, not Fastify's.
  const json = (_request: unknown, body: Buffer, done: (error: null, body: Buffer) => void) =>
    done(null, body)
  for (const type of ['application/json', /^application\/[^;]*\+json/]) {
    fastify.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: handler.bodyLimit }, json)
  }
  fastify.setErrorHandler(async (error: { code?: string }, _request, reply) => {
    if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error
    return send(reply, await handler.respond(payloadTooLargeError(handler.bodyLimit)))
  })
  fastify.route({
    method: ALL_METHODS,
    url: handler.path,
    handler: async (request, reply) => {
      const answer = await handler.handle({
        method: request.method,
        path: handler.path,
        headers: request.headers,
        body: request.body ?? request.raw,
        framework: 'fastify',
      })
      return send(reply, answer!)
    },
  })
}

/**
 * `app.register(schedulingOAuth, { prefix: '/auth/scheduling', ... })`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix.
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
        secure: request.protocol === 'https',
        mountPath: fastify.prefix,
        raw: request,
      })
      return answer ? send(reply, answer) : reply.callNotFound()
    },
  })
}
