import type { DedupeStore } from '../../claims/dedupe.js'
import type { WebhookResponse } from '../answer.js'
import type { WebhookContext, WebhookHandlerFn } from '../context.js'
import type { AnyWebhookEvent } from '../events.js'
import type { WebhookQueue } from '../queue.js'

/**
 * What the handler, the registry and the queue hand-off ask of a delivery's telemetry when
 * something records. delivery.ts implements it; the modules that call it import only this type,
 * so they carry none of the telemetry's code.
 */
export interface DeliveryWatch {
  /** One handler function, in its span and timed. */
  run(fn: WebhookHandlerFn, index: number, event: AnyWebhookEvent, context: WebhookContext): unknown
  /** The enqueue, in its producer span, its trace context handed to the queue. */
  enqueue(
    queue: WebhookQueue,
    event: AnyWebhookEvent,
    context: WebhookContext,
    key: string,
  ): unknown
  /** The dedupe store, each claim in a span when the delivery's span records. */
  dedupe(store: DedupeStore): DedupeStore
  /** Tells the delivery's span what event it carries (a composed path's `parseEvent`). */
  described(event: AnyWebhookEvent, context: WebhookContext): void
  /** Reading and verifying the delivery, in its span (`scheduling.webhook.verify`). */
  verify<R extends { event: AnyWebhookEvent; context: WebhookContext }>(
    receive: () => Promise<R>,
  ): Promise<R>
}

/**
 * The delivery telemetry the handler calls when something may record (delivery.ts): in the
 * node build always at hand; in the default (Web) build given by `useOpenTelemetry`, so a
 * bundle for workerd or a browser carries none of it unless the app turns telemetry on.
 */
export interface DeliveryObserver {
  /** The watch of a delivery to `route`; `undefined` when neither a span nor a meter records. */
  startDelivery(method: string, route: string): DeliveryWatch | undefined
  /** Runs `answer` under the delivery's span, then ends it and records the delivery's metrics. */
  observeDelivery(
    watch: DeliveryWatch,
    state: { webhookId: string | undefined },
    answer: () => Promise<WebhookResponse>,
  ): Promise<WebhookResponse>
  /** The watch of a `dispatch`, under the active span; `undefined` when nothing records. */
  watchDispatch(): DeliveryWatch | undefined
}
