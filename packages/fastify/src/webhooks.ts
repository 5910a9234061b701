import {
  attachWebhookMethods,
  createWebhookHandler,
  type WebhookMethods,
} from '@scheduling-kit/core/adapter'
import type {
  SecretSource,
  WebhookHandler,
  WebhookHandlerOptions,
} from '@scheduling-kit/core/webhooks'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ALL_METHODS, keepRawStream, requestLogger, send } from './shared.js'

export type SchedulingWebhooksOptions = WebhookHandlerOptions

/**
 * A webhooks plugin made ahead of `register` with `schedulingWebhooks(options)`: register it
 * with `app.register(plugin)`, and keep it for `replay()`, `catchUp()`, `health()` and `on()`.
 */
export interface SchedulingWebhooksPlugin
  extends FastifyPluginAsync,
    WebhookMethods<SchedulingWebhooksPlugin> {}

/** What to do when a body parser got there first, on Fastify. */
const FIX =
  'Register schedulingWebhooks as its own plugin (app.register(schedulingWebhooks, opts)) so its ' +
  'raw-body parser applies; do not wrap it in fastify-plugin.'

/** The routes of one handler, in the encapsulated context `fastify`. */
async function serve(fastify: FastifyInstance, handler: WebhookHandler): Promise<void> {
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

/** Whether the first argument is the Fastify instance `register` passes a plugin. */
const isFastify = (value: unknown): value is FastifyInstance =>
  typeof (value as FastifyInstance | undefined)?.route === 'function' &&
  typeof (value as FastifyInstance).addContentTypeParser === 'function'

/** `schedulingWebhooks` both ways: the plugin itself, and the maker of a plugin with methods. */
interface SchedulingWebhooks
  extends FastifyPluginAsync<SchedulingWebhooksOptions | { secret: SecretSource }> {
  (options: SchedulingWebhooksOptions): SchedulingWebhooksPlugin
}

/**
 * The webhooks plugin, answering `POST /webhooks/scheduling` (option `path`, under the register
 * prefix). Encapsulated: its body parser does not reach other routes. Two ways:
 * - `app.register(schedulingWebhooks, { secret, ... })`;
 * - `const webhooks = schedulingWebhooks({ secret, ledger, ... })`, then
 *   `app.register(webhooks)`: `webhooks.replay()`, `webhooks.catchUp()` and `webhooks.health()`
 *   are the handler's, as on the other adapters' middleware.
 *
 * @example
 * ```ts
 * const webhooks = schedulingWebhooks({
 *   secret: process.env.SCHEDULING_SECRET!,
 *   on: { 'event.created': (event) => book(event.payload) },
 * })
 * await app.register(webhooks)
 * ```
 */
export const schedulingWebhooks = function schedulingWebhooks(
  first: FastifyInstance | SchedulingWebhooksOptions,
  options?: SchedulingWebhooksOptions,
): Promise<void> | SchedulingWebhooksPlugin {
  if (isFastify(first)) return serve(first, createWebhookHandler(options!))
  const handler = createWebhookHandler(first)
  const plugin = (fastify: FastifyInstance) => serve(fastify, handler)
  return attachWebhookMethods<SchedulingWebhooksPlugin>(plugin, handler)
} as SchedulingWebhooks
