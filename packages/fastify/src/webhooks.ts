import type { SecretSource, WebhookHandlerOptions } from '@scheduling-kit/core'
import { createWebhookHandler } from '@scheduling-kit/core'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ALL_METHODS, keepRawStream, requestLogger, send } from './shared.js'

export type SchedulingWebhooksOptions = WebhookHandlerOptions

/** What to do when a body parser got there first, on Fastify. */
const FIX =
  'Register schedulingWebhooks as its own plugin (app.register(schedulingWebhooks, opts)) so its ' +
  'raw-body parser applies; do not wrap it in fastify-plugin.'

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
      fix: FIX,
      logger: requestLogger(request),
    })
    return send(reply, answer!)
  }
  // The path with and without a trailing slash, as core answers it on every other framework.
  for (const url of handler.path === '/' ? ['/'] : [handler.path, `${handler.path}/`]) {
    fastify.route({ method: ALL_METHODS, url, handler: route })
  }
}
