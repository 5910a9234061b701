import type { IncomingMessage } from 'node:http'
import {
  attachWebhookMethods,
  createWebhookHandler,
  type WebhookMethods,
} from '@scheduling-kit/core/adapter'
import type { OAuthResponse } from '@scheduling-kit/core/oauth'
import type {
  SecretSource,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
  WebhookRequest,
  WebhookResponse,
} from '@scheduling-kit/core/webhooks'
import type { H3Event, Middleware } from 'h3'

export interface SchedulingWebhooksMiddleware
  extends Middleware,
    WebhookMethods<SchedulingWebhooksMiddleware> {}

/** What to do when something read the body first, on h3. */
const FIX =
  'Mount schedulingWebhooks() before any middleware that reads the body (event.req.json(), ' +
  'readBody(event)), or keep what it read in event.context.rawBody (the text) or ' +
  'event.context.body (the parsed JSON).'

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
  if (node?.rawBody instanceof Uint8Array) return { body: node.rawBody, bodyUsed: false }
  if (event.req.bodyUsed || node?.readableDidRead) {
    // h3 keeps nothing of what readBody(event) read (h3js/h3#1241): an app's middleware that
    // reads the body first keeps it in event.context, raw (`rawBody`) or parsed (`body`).
    const { rawBody, body } = event.context as { rawBody?: unknown; body?: unknown }
    if (typeof rawBody === 'string' || rawBody instanceof Uint8Array) {
      return { body: rawBody, bodyUsed: false }
    }
    if (typeof body === 'object' && body !== null) return { body, bodyUsed: false }
    return { body: null, bodyUsed: true }
  }
  return { body: event.req.body, bodyUsed: event.req.bodyUsed }
}

/**
 * Whether the Node request is untouched: nobody has read it or listens to it yet, so no byte
 * has gone elsewhere (the common case, checked first and without building anything).
 */
const untouched = (node: NodeRequest | undefined): node is NodeRequest =>
  node !== undefined && node.readableFlowing === null && !node.readableDidRead

export function send(event: H3Event, answer: WebhookResponse | OAuthResponse): string {
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
  secretOrOptions: SecretSource | WebhookHandlerOptions | undefined,
  options?: WebhookHandlerRestOptions,
): SchedulingWebhooksMiddleware {
  const handler = createWebhookHandler(secretOrOptions, options)
  const middleware: Middleware = async (event, next) => {
    const node = event.runtime?.node?.req as NodeRequest | undefined
    const other = untouched(node) ? undefined : bodyOf(event, node)
    const answer = await handler.handle({
      method: event.req.method,
      path: event.url.pathname,
      // On Node, the Node request's own header record (no wrapper between).
      headers: node?.headers ?? event.req.headers,
      body: other === undefined ? node : other.body,
      bodyUsed: other?.bodyUsed,
      fix: FIX,
    })
    return answer ? send(event, answer) : next()
  }
  return attachWebhookMethods<SchedulingWebhooksMiddleware>(middleware, handler)
}
