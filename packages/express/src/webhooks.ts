import {
  attachWebhookMethods,
  createWebhookHandler,
  nodeBody,
  optionsOf,
  serverErrorOf,
  type WebhookMethods,
  writeNode,
} from '@scheduling-kit/core/adapter'
import type {
  SecretSource,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
} from '@scheduling-kit/core/webhooks'
import type { NextFunction, Request, Response } from 'express'

export type Middleware = (req: Request, res: Response, next: NextFunction) => void

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

const rawBodyOf = (req: Request) => (req as { rawBody?: unknown }).rawBody
const bodyOf = (req: Request) => req.body

/** What to do when a body parser got there first, on Express. */
const FIX =
  'Mount schedulingWebhooks() before express.json(), or keep the raw bytes for it with ' +
  "keepRawBody from '@scheduling-kit/express': app.use(express.json({ verify: keepRawBody }))."

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
  secretOrOptions: SecretSource | SchedulingWebhooksOptions | undefined,
  options?: WebhookHandlerRestOptions & ExpressWebhookOptions,
): SchedulingWebhooksMiddleware {
  const forwardErrors =
    optionsOf<ExpressWebhookOptions>(secretOrOptions, options).forwardErrors === true
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware = ((req, res, next) => {
    handler
      .handle({
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: nodeBody(req, req, rawBodyOf, bodyOf),
        fix: FIX,
        errorsToFramework: forwardErrors,
      })
      .then((answer) => {
        const error = forwardErrors ? serverErrorOf(answer) : undefined
        return error ? next(error) : writeNode(res, answer, next)
      }, next)
  }) as Middleware
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}
