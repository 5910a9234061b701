import { ConfigError, isWebhookError, WebhookError } from '../errors/errors.js'
import type { HeadersInput } from '../http/headers.js'
import { errorAnswer, type WebhookResponse } from '../webhooks/answer.js'
import type { WebhookContext } from '../webhooks/context.js'
import { DEFAULT_WEBHOOK_PATH } from '../webhooks/defaults.js'
import type { AnyWebhookEvent } from '../webhooks/events.js'
import { answerFetch } from '../webhooks/fetch.js'
import type { WebhookErrorFn } from '../webhooks/options.js'
import type { WebhookRequest } from '../webhooks/request.js'
import { normalizePath } from '../webhooks/settings.js'
import type { DeliveryWatch } from '../webhooks/telemetry/contract.js'

// A webhook path the app composes: the parts of a delivery (read the body, verify, parse, the
// age check, a dedupe claim or the ledger, the handlers or a queue, telemetry, the log), each a
// module of this folder, run in the order given, each around the ones after it. A bundler keeps
// only the parts the app names. `createWebhookHandler` is the preset that has them all.

/** A delivery as the parts see it: what the request says, filled in as the parts run. */
export interface WebhookDelivery {
  readonly request: WebhookRequest
  /** The path this delivery came to (the composed path's). */
  readonly path: string
  /** Whether the last part hands deliveries to a queue (`enqueueTo`): a record hands them off. */
  readonly queued: boolean
  /** The body's bytes, once read (`readBody`, `acceptParsedBody`). */
  body?: Uint8Array
  /** The webhook id header, once read (`checkSignature`, `checkAccountSignature`). */
  webhookId: string | undefined
  /** Which of the secrets verified the body. */
  secretIndex?: number
  /** Verified: the identity of the looked-up secret, which scopes the dedupe key. */
  identity?: string
  /** The connected account whose webhook it came to (`checkAccountSignature`). */
  account?: string
  /** The event, once parsed (`parseEvent`). */
  event: AnyWebhookEvent | undefined
  /** The verified body as text. */
  text?: string
  /** The dedupe key: the payload id, scoped by the account or the secret's identity. */
  key?: string
  /** What a record adds to the handlers' context (a replay, a catch-up, a stale run). */
  extra?: Partial<WebhookContext>
  /** The delivery's telemetry, when `traced()` runs and something records (parts call it). */
  watch?: DeliveryWatch
}

/** What the next parts answer. */
export type NextPart = () => Promise<WebhookResponse>

/**
 * One part of a composed webhook path: does its work on `delivery`, then answers itself (a
 * refusal, a duplicate) or calls `next()` for the parts after it. Throw a `WebhookError` to
 * refuse; anything else thrown is answered 500 `handler_failed`.
 */
export type WebhookPart = ((
  delivery: WebhookDelivery,
  next: NextPart,
) => WebhookResponse | Promise<WebhookResponse>) & {
  /** Set on a last part that hands deliveries to a queue. */
  readonly queues?: true
}

export interface ComposeWebhooksOptions {
  /** The path it answers, relative to where it is mounted. Default `/webhooks/scheduling`. */
  path?: string
  /** The parts, in order; the last one answers (`handlers(...)` or `enqueueTo(queue)`). */
  parts: readonly WebhookPart[]
  /** Told of every error answer; one that throws does not change the answer. */
  onError?: WebhookErrorFn
}

/** A composed webhook path: answers its path, as the preset handler does. */
export interface WebhookPath {
  readonly path: string
  /** Answers one request, or resolves to `undefined` when its path is not this one. */
  handle(request: WebhookRequest): Promise<WebhookResponse | undefined>
  /** Serves a Fetch `Request`; 404 off its path. */
  fetch(request: Request): Promise<Response>
}

const WHO = 'composeWebhooks'

/** The error a delivery ends with: a refusal as it is, anything else as `handler_failed`. */
export function endedWith(caught: unknown): WebhookError {
  return isWebhookError(caught)
    ? caught
    : new WebhookError(
        'handler_failed',
        'The webhook could not be processed; answered 500 so the service delivers it again.',
        { cause: caught },
      )
}

/**
 * A webhook path of the parts given, in order: each runs around the ones after it.
 *
 * @example
 * ```ts
 * const webhooks = composeWebhooks({
 *   parts: [
 *     readBody(),
 *     checkSignature(env.SCHEDULING_SECRET),
 *     parseEvent(),
 *     dedupe(new MemoryDedupeStore()),
 *     handlers({ 'event.created': (event) => book(event.payload) }),
 *   ],
 * })
 * export default { fetch: webhooks.fetch }
 * ```
 */
export function composeWebhooks(options: ComposeWebhooksOptions): WebhookPath {
  const parts = checkedParts(options)
  const path = normalizePath(options.path ?? DEFAULT_WEBHOOK_PATH)
  const queued = parts[parts.length - 1]!.queues === true
  const { onError } = options
  // Async: a part that throws, synchronously or not, rejects the parts around it alike.
  const run = async (delivery: WebhookDelivery, at: number): Promise<WebhookResponse> => {
    const part = parts[at]
    if (part === undefined)
      throw new ConfigError(
        `${WHO}: the last part called next(); end with handlers() or enqueueTo().`,
      )
    return part(delivery, () => run(delivery, at + 1))
  }
  const handle = async (request: WebhookRequest): Promise<WebhookResponse | undefined> => {
    if (normalizePath(request.path) !== path) return undefined
    const delivery: WebhookDelivery = {
      request,
      path,
      queued,
      webhookId: undefined,
      event: undefined,
    }
    try {
      return await run(delivery, 0)
    } catch (caught) {
      const error = endedWith(caught)
      try {
        await onError?.(error, { webhookId: delivery.webhookId, event: delivery.event })
      } catch {
        // A failing listener must not change the answer.
      }
      return { ...errorAnswer(error), error }
    }
  }
  return { path, handle, fetch: (request) => answerFetch(handle, request) }
}

function checkedParts(options: ComposeWebhooksOptions): readonly WebhookPart[] {
  const parts = options?.parts
  const path = options?.path
  if (
    !Array.isArray(parts) ||
    parts.length === 0 ||
    parts.some((part) => typeof part !== 'function') ||
    (path !== undefined && (typeof path !== 'string' || !path.startsWith('/')))
  )
    throw new ConfigError(
      `${WHO}: pass { parts: [...] }, functions of the delivery whose last one answers, and a path starting with "/" if any.`,
    )
  return [...parts]
}

/** The context the handlers see, from what the parts found. */
export function contextOf(delivery: WebhookDelivery): WebhookContext {
  const context: WebhookContext = {
    webhookId: delivery.webhookId,
    secretIndex: delivery.secretIndex ?? 0,
    headers: delivery.request.headers as HeadersInput,
  }
  if (delivery.account !== undefined) context.account = delivery.account
  return delivery.extra === undefined ? context : { ...context, ...delivery.extra }
}

/** What a part needs of the parts before it, or a `ConfigError` naming them. */
export function needs<K extends keyof WebhookDelivery>(
  delivery: WebhookDelivery,
  field: K,
  part: string,
  before: string,
): NonNullable<WebhookDelivery[K]> {
  const value = delivery[field]
  if (value === undefined) throw new ConfigError(`${WHO}: ${part} runs after ${before}.`)
  return value as NonNullable<WebhookDelivery[K]>
}
