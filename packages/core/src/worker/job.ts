import type { LedgerContext, ReplayRequest } from '../claims/record.js'
import { isWebhookError } from '../errors/errors.js'
import type { WebhookContext } from '../webhooks/context.js'
import type { WebhookHandler } from '../webhooks/contract.js'
import type { AnyWebhookEvent } from '../webhooks/events.js'
import type { QueueDelivery } from '../webhooks/queue.js'

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
  /** The delivery's dedupe key (its ledger id); queues make their job id from it (`jobKeyOf`). */
  key?: string
  /** A replay's job: what the replay asked for (the worker replays the entry `key`). */
  replay?: ReplayRequest & { nonce?: string }
  /** A catch-up's job: when its listing began. */
  listedAt?: number
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
    ...(delivery?.replay === undefined ? {} : { replay: delivery.replay }),
    ...(delivery?.listedAt === undefined ? {} : { listedAt: delivery.listedAt }),
  }
}

/**
 * The key a queue makes a delivery's job id from: its dedupe key (every retry of it, one job),
 * or, for a replay, the key and the replay's own nonce (a replay is a job of its own, even while
 * the delivery's job is kept).
 */
export function jobKeyOf(delivery: QueueDelivery | undefined, fallback: string): string {
  const key = delivery?.key ?? fallback
  const replay = delivery?.replay
  return replay === undefined ? key : `${key}\u0000replay\u0000${replay.nonce ?? ''}`
}

/**
 * Runs a queued delivery's handlers in a worker. A handler's own error (its message and stack)
 * is what it throws, not the HTTP wording the handler wraps it in: the job's failure says what
 * went wrong.
 */
export async function dispatchQueued(
  handler: Pick<WebhookHandler, 'dispatch'>,
  { event, webhookId, secretIndex, account }: QueuedDelivery,
  /** What the ledger tells the handlers: a replay, a catch-up, a stale delivery run. */
  extra?: LedgerContext,
): Promise<void> {
  try {
    await handler.dispatch(event, { webhookId, secretIndex, account, ...extra })
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
