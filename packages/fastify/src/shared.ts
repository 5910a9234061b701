import type { OAuthResponse } from '@scheduling-kit/core/oauth'
import type { Logger } from '@scheduling-kit/core/telemetry'
import type { WebhookResponse } from '@scheduling-kit/core/webhooks'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export const ALL_METHODS = ['DELETE', 'GET', 'OPTIONS', 'PATCH', 'POST', 'PUT']

/**
 * The request's own logger (it carries the request id) when the app has Fastify's logger on;
 * `undefined` (core then uses the console) when it is off, so failures are not swallowed.
 */
export function requestLogger(request: FastifyRequest): Logger | undefined {
  return typeof request.log?.level === 'string' ? (request.log as unknown as Logger) : undefined
}

export function send(reply: FastifyReply, answer: WebhookResponse | OAuthResponse): FastifyReply {
  return reply.code(answer.status).headers(answer.headers).send(answer.body)
}

/** Body parsers of this plugin only (it is encapsulated): the raw stream goes to core untouched. */
export function keepRawStream(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
}
