// The children of a delivery's span (the dedupe claim, each handler, the enqueue) and their
// metrics, for delivery.ts: loaded with it, only once something may record.

import type { DedupeStore } from '../../claims/dedupe.js'
import { type Instruments, since } from '../../telemetry/metrics.js'
import {
  type Attributes,
  attributeText,
  endSpan,
  PRODUCER,
  startSpan,
  type Traced,
  within,
} from '../../telemetry/otel.js'
import { traceCarrier } from '../../telemetry/propagation.js'
import { isThenable } from '../../thenable.js'
import { DUPLICATE_BODY, REMOVED_BODY, type WebhookResponse } from '../answer.js'
import type { WebhookContext, WebhookHandlerFn } from '../context.js'
import type { AnyWebhookEvent } from '../events.js'
import type { WebhookQueue } from '../queue.js'

/** What a child span and its metrics hang from: the delivery's span, when recording, and the meters. */
export interface Watched {
  parent: Traced | undefined
  m: Instruments | undefined
}

/** The attributes a delivery's span and its children carry once the event is known. */
export function eventAttributes(event: AnyWebhookEvent, context: WebhookContext): Attributes {
  const attributes: Attributes = {
    'scheduling.payload.id': attributeText(String(event.id)),
    'scheduling.event.type': attributeText(String(event.type)),
  }
  if (context.account !== undefined)
    attributes['scheduling.account'] = attributeText(context.account)
  return attributes
}

/** What a delivery came to, for `scheduling.webhook.outcome`. */
export function outcomeOf(answer: WebhookResponse): string {
  if (answer.error !== undefined)
    return answer.error.code === 'delivery_in_progress' ? 'in_progress' : 'refused'
  if (answer.body === DUPLICATE_BODY) return 'duplicate'
  if (answer.body === REMOVED_BODY) return 'removed'
  return 'received'
}

/** The dedupe store, with a span around each claim (the claim is what a delivery waits on). */
export function tracedDedupe(store: DedupeStore, parent: Traced): DedupeStore {
  return {
    claim(key, owner) {
      const traced = startSpan('scheduling.webhook.dedupe.claim', { parent })
      let claimed: ReturnType<DedupeStore['claim']>
      try {
        claimed = within(traced, () => store.claim(key, owner))
      } catch (error) {
        endSpan(traced, error)
        throw error
      }
      if (!isThenable(claimed)) {
        endSpan(traced, undefined, { 'scheduling.dedupe.claim': claimed })
        return claimed
      }
      return Promise.resolve(claimed).then(
        (result) => {
          endSpan(traced, undefined, { 'scheduling.dedupe.claim': result })
          return result
        },
        (error) => {
          endSpan(traced, error)
          throw error
        },
      )
    },
    complete: (key, owner) => store.complete(key, owner),
    release: (key, owner) => store.release(key, owner),
    ...(store.extend === undefined
      ? {}
      : { extend: (key: string, owner: string) => store.extend!(key, owner) }),
  }
}

/**
 * Runs one handler function with its span (`scheduling.webhook.handler`) active and its time
 * recorded; returns what it returned, or throws what it threw.
 */
export function runWatched(
  fn: WebhookHandlerFn,
  index: number,
  event: AnyWebhookEvent,
  context: WebhookContext,
  watch: Watched,
): unknown {
  const attributes = {
    'scheduling.event.type': attributeText(String(event.type)),
    'scheduling.handler.index': index,
  }
  const traced =
    watch.parent === undefined
      ? undefined
      : startSpan('scheduling.webhook.handler', { parent: watch.parent, attributes })
  const started = performance.now()
  const done = (error?: unknown) => {
    endSpan(traced, error)
    watch.m?.handlerDuration.record(since(started), {
      'scheduling.event.type': attributes['scheduling.event.type'],
      ...(error === undefined ? {} : { 'error.type': 'handler_failed' }),
    })
  }
  let result: unknown
  try {
    result = within(traced, () => fn(event, context))
  } catch (error) {
    done(error)
    throw error
  }
  if (!isThenable(result)) {
    done()
    return result
  }
  return Promise.resolve(result).then(
    (value) => {
      done()
      return value
    },
    (error) => {
      done(error)
      throw error
    },
  )
}

/**
 * Hands the event to the queue inside a `send {queue}` producer span whose trace context goes
 * with the job; a refusal is counted in `scheduling.webhook.enqueue.failures`.
 */
export function enqueueWatched(
  queue: WebhookQueue,
  event: AnyWebhookEvent,
  context: WebhookContext,
  key: string,
  watch: Watched,
): unknown {
  const messaging = queue.messaging
  const destination = messaging === undefined ? 'webhooks' : attributeText(messaging.destination)
  const traced =
    watch.parent === undefined
      ? undefined
      : startSpan(`send ${destination}`, {
          parent: watch.parent,
          kind: PRODUCER,
          attributes: {
            'messaging.operation.type': 'send',
            'messaging.operation.name': 'send',
            'messaging.destination.name': destination,
            ...(messaging === undefined
              ? {}
              : { 'messaging.system': attributeText(messaging.system) }),
            ...eventAttributes(event, context),
          },
        })
  const trace = traceCarrier(traced)
  const failed = (error: unknown) => {
    endSpan(traced, error)
    watch.m?.enqueueFailures.add(1, { 'messaging.destination.name': destination })
  }
  let queued: unknown
  try {
    queued = within(traced, () =>
      queue.enqueue(event, context, trace === undefined ? { key } : { key, trace }),
    )
  } catch (error) {
    failed(error)
    throw error
  }
  if (!isThenable(queued)) {
    endSpan(traced)
    return queued
  }
  return Promise.resolve(queued).then(
    (value) => {
      endSpan(traced)
      return value
    },
    (error) => {
      failed(error)
      throw error
    },
  )
}
