import type { ReplayRequest } from '../claims/record.js'
import { serverText, WebhookError } from '../errors/errors.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { WebhookContext } from './context.js'
import type { AnyWebhookEvent } from './events.js'

/** What a queue learns of a delivery besides its event. */
export interface QueueDelivery {
  /**
   * The delivery's dedupe key: what its signature vouches for (the payload id, under the
   * identity of the secret that verified it when secrets are looked up per request; never the
   * unsigned webhook id header). The same for every retry of one delivery, in every process:
   * a queue can make it its job id.
   */
  key: string
  /**
   * The W3C trace context (`traceparent`, and `tracestate` when there is one) of the
   * delivery's enqueue span, when OpenTelemetry records it: store it with the job and hand it
   * to `startJobSpan` in the worker, so the job's spans join the delivery's trace.
   */
  trace?: Record<string, string>
  /**
   * Set on a replay's job (`replay()` on a handler with a queue): the worker replays the
   * ledger's entry `key` through its ledger. Its job id differs from the delivery's (see
   * `jobKeyOf`): the delivery's own job may still be kept.
   */
  replay?: ReplayRequest & { nonce?: string }
  /** Set on a catch-up's job: the time its listing began (`LedgerEntry.listedAt`). */
  listedAt?: number
}

/**
 * A durable queue: the event is answered 200 once `enqueue` resolves, 503 if it rejects.
 * `createBullMQQueue` from `@scheduling-kit/bullmq` is one.
 */
export interface WebhookQueue {
  enqueue(
    event: AnyWebhookEvent,
    context: WebhookContext,
    delivery: QueueDelivery,
  ): unknown | Promise<unknown>
  /**
   * What the enqueue span names the queue by (`messaging.system`, `messaging.destination.name`),
   * when the queue says. `createBullMQQueue` does.
   */
  readonly messaging?: { system: string; destination: string }
  /** Whether the queue can take jobs now (connected), for the handler's `health()`. */
  health?(options?: HealthOptions): Promise<HealthReport>
}

/** The queue did not take the event: 503, so the service delivers it again. */
export function enqueueFailed(event: AnyWebhookEvent, cause: unknown): WebhookError {
  return new WebhookError(
    'queue_rejected',
    `The queue did not accept ${serverText(event.type, 100)} (${event.id}); answered 503 so the service delivers it again.`,
    { cause },
  )
}
