import { isWebhookError } from '../errors/errors.js'
import type { WebhookContext } from './context.js'
import type { WebhookHandler } from './contract.js'
import type { AnyWebhookEvent } from './events.js'
import type { QueueDelivery } from './queue.js'

/**
 * What a queue's job holds for one delivery, on any queue package: the event and the parts of
 * its delivery context a handler may use.
 */
export interface QueuedDelivery {
  event: AnyWebhookEvent
  webhookId: string | undefined
  secretIndex: number
  /** The connected account it belongs to, when the handler verifies with subscriptions. */
  account?: string
  /** The W3C trace context of the delivery's enqueue span, when OpenTelemetry recorded it. */
  trace?: Record<string, string>
  /** The delivery's dedupe key (its ledger id); queues make their job id from it. */
  key?: string
}

/** A delivery as its job holds it (what `enqueue` was given, less the headers). */
export function queuedDelivery(
  event: AnyWebhookEvent,
  context: WebhookContext,
  delivery?: QueueDelivery,
): QueuedDelivery {
  return {
    event,
    webhookId: context.webhookId,
    secretIndex: context.secretIndex,
    ...(context.account === undefined ? {} : { account: context.account }),
    ...(delivery?.trace === undefined ? {} : { trace: delivery.trace }),
    ...(delivery?.key === undefined ? {} : { key: delivery.key }),
  }
}

/**
 * Runs a queued delivery's handlers in a worker. A handler's own error (its message and stack)
 * is what it throws, not the HTTP wording the handler wraps it in: the job's failure says what
 * went wrong.
 */
export async function dispatchQueued(
  handler: Pick<WebhookHandler, 'dispatch'>,
  { event, webhookId, secretIndex, account }: QueuedDelivery,
): Promise<void> {
  try {
    await handler.dispatch(event, { webhookId, secretIndex, account })
  } catch (error) {
    throw isWebhookError(error) && error.code === 'handler_failed' ? error.cause : error
  }
}

/** `work`, or a rejection with `message` once `ms` passed (the timer cleared either way). */
export async function withinMs<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}
