// A delivery's telemetry from end to end: its span, the verify span under it, the delivery
// metrics, and what the registry and the queue call through `Watch`. Loaded by switch.ts only
// once something may record: an app without an OpenTelemetry SDK never loads this module or
// what it imports.

import type { DedupeStore } from '../../claims/dedupe.js'
import { type Instruments, meters, since } from '../../telemetry/metrics.js'
import {
  type Attributes,
  activeSpan,
  attributeText,
  endSpan,
  finishSpan,
  setAttributes,
  startSpan,
  type Traced,
  within,
} from '../../telemetry/otel.js'
import type { WebhookResponse } from '../answer.js'
import type { WebhookContext, WebhookHandlerFn } from '../context.js'
import type { AnyWebhookEvent } from '../events.js'
import type { WebhookQueue } from '../queue.js'
import type { DeliveryObserver, DeliveryWatch } from './contract.js'
import {
  enqueueWatched,
  eventAttributes,
  outcomeOf,
  runWatched,
  tracedDedupe,
  type Watched,
} from './spans.js'

/** What observes one delivery (or one dispatch): its span, when recording, and the metrics. */
export class Watch implements Watched, DeliveryWatch {
  constructor(
    readonly parent: Traced | undefined,
    readonly m: Instruments | undefined,
  ) {}

  /** One handler function, in its span and timed. */
  run(fn: WebhookHandlerFn, index: number, event: AnyWebhookEvent, context: WebhookContext) {
    return runWatched(fn, index, event, context, this)
  }

  /** The enqueue, in its producer span, its trace context handed to the queue. */
  enqueue(queue: WebhookQueue, event: AnyWebhookEvent, context: WebhookContext, key: string) {
    return enqueueWatched(queue, event, context, key, this)
  }

  /** The dedupe store, each claim in a span when the delivery's span records. */
  dedupe(store: DedupeStore): DedupeStore {
    return this.parent === undefined ? store : tracedDedupe(store, this.parent)
  }

  /** `receive` in its span (`scheduling.webhook.verify`): body, secret, signature, envelope. */
  described(event: AnyWebhookEvent, context: WebhookContext): void {
    if (this.parent !== undefined) setAttributes(this.parent, eventAttributes(event, context))
  }

  async verify<R extends { event: AnyWebhookEvent; context: WebhookContext }>(
    receive: () => Promise<R>,
  ): Promise<R> {
    const parent = this.parent
    if (parent === undefined) return receive()
    const traced = startSpan('scheduling.webhook.verify', { parent })
    try {
      const received = await receive()
      const attributes = eventAttributes(received.event, received.context)
      setAttributes(parent, attributes)
      endSpan(traced, undefined, attributes)
      return received
    } catch (error) {
      endSpan(traced, error)
      throw error
    }
  }
}

/**
 * The watch of a delivery to `route`: its span (`scheduling.webhook.delivery`) and the meters;
 * `undefined` when neither records (an API without an SDK: one non-recording span and one look
 * at the meter provider, nothing more).
 */
export function startDelivery(method: string, route: string): Watch | undefined {
  const parent = startSpan('scheduling.webhook.delivery', {
    attributes: { 'http.request.method': attributeText(method), 'http.route': route },
  })
  const m = meters()
  return parent === undefined && m === undefined ? undefined : new Watch(parent, m)
}

/** Runs `answer` under the delivery's span, then ends it and records the delivery's metrics. */
export async function observeDelivery(
  delivery: DeliveryWatch,
  state: { webhookId: string | undefined },
  answer: () => Promise<WebhookResponse>,
): Promise<WebhookResponse> {
  const watch = delivery as Watch // startDelivery made it
  const started = performance.now()
  const answered = await within(watch.parent, answer)
  const status = answered.status
  const outcome = outcomeOf(answered)
  const code = answered.error?.code
  const attributes: Attributes = {
    'http.response.status_code': status,
    'scheduling.webhook.outcome': outcome,
  }
  if (code !== undefined) attributes['error.type'] = code
  if (watch.parent !== undefined) {
    if (state.webhookId !== undefined)
      setAttributes(watch.parent, { 'scheduling.webhook.id': attributeText(state.webhookId) })
    // A refusal is the sender's fault; only a server error marks the delivery span failed.
    finishSpan(watch.parent, attributes, status >= 500 ? code : undefined)
  }
  watch.m?.deliveries.add(1, attributes)
  watch.m?.deliveryDuration.record(since(started), {
    'http.response.status_code': status,
    'scheduling.webhook.outcome': outcome,
  })
  return answered
}

/**
 * The watch of a `dispatch` (a queue's worker runs it inside its job's span: the handlers'
 * spans are its children); `undefined` when nothing records.
 */
export function watchDispatch(): Watch | undefined {
  const parent = activeSpan()
  const m = meters()
  return parent === undefined && m === undefined ? undefined : new Watch(parent, m)
}

/** What the handler calls: the node build's default, and what `useOpenTelemetry` gives. */
export const deliveryObserver: DeliveryObserver = { startDelivery, observeDelivery, watchDispatch }
