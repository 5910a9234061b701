import {
  appEventLogger,
  attachWebhookMethods,
  createWebhookHandler,
  nodeBody,
  quietParserRefusals,
  type WebhookMethods,
} from '@scheduling-kit/core/adapter'
import type {
  SecretSource,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
} from '@scheduling-kit/core/webhooks'
import type { Context, Middleware } from 'koa'
import { reply } from './log.js'

export interface SchedulingWebhooksMiddleware
  extends Middleware,
    WebhookMethods<SchedulingWebhooksMiddleware> {}

/** What to do when a body parser got there first, on Koa. */
const FIX =
  'Mount schedulingWebhooks() before the body parser, or use @koa/bodyparser, which keeps ctx.request.rawBody.'

/**
 * A parser placed first leaves types it does not parse (`application/foo+json`) unread;
 * @koa/bodyparser keeps `rawBody`.
 */
type KoaRequest = Context['request'] & { rawBody?: unknown; body?: unknown }
const rawBodyOf = (request: KoaRequest) => request.rawBody
const bodyOf = (request: KoaRequest) => request.body

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
  secretOrOptions: SecretSource | WebhookHandlerOptions | undefined,
  options?: WebhookHandlerRestOptions,
): SchedulingWebhooksMiddleware {
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware = (async (ctx, next) => {
    quietParserRefusals(ctx.app, handler.path)
    const answer = await handler.handle({
      method: ctx.method,
      path: ctx.url,
      headers: ctx.headers,
      body: nodeBody(ctx.req, ctx.request as KoaRequest, rawBodyOf, bodyOf),
      fix: FIX,
      logger: appEventLogger(ctx.app),
    })
    await reply(ctx, next, answer)
  }) as Middleware
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}
