import { attributeText, CONSUMER, runInSpan, startSpan } from '../../telemetry/otel.js'
import { contextFrom } from '../../telemetry/propagation.js'
import type { AnyWebhookEvent } from '../events.js'

/** A queued delivery as a worker takes it, for its span. */
export interface JobSpanOptions {
  /** The queue's kind, e.g. `bullmq` (`messaging.system`). */
  system: string
  /** The queue's name (`messaging.destination.name`). */
  destination: string
  /** The job's id (`messaging.message.id`). */
  messageId?: string
  /** How many times the job was tried before this one. */
  attemptsMade?: number
  /** The event the job carries. */
  event?: AnyWebhookEvent
  /** `QueueDelivery.trace`, as the job stored it. */
  trace?: unknown
}

/**
 * For a queue's worker: runs `work` in a consumer span, `process {destination}`, that
 * continues the trace of the delivery that enqueued the job (its `QueueDelivery.trace`) and
 * links to its enqueue span. The webhook handler's `dispatch` called inside puts its handlers'
 * spans under it. Without OpenTelemetry, just runs `work`.
 */
export function inJobSpan<T>(options: JobSpanOptions, work: () => Promise<T>): Promise<T> {
  const remote = contextFrom(options.trace)
  const destination = attributeText(options.destination)
  const attributes: Record<string, string | number> = {
    'messaging.system': attributeText(options.system),
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'process',
    'messaging.destination.name': destination,
  }
  if (options.messageId !== undefined)
    attributes['messaging.message.id'] = attributeText(options.messageId)
  if (options.attemptsMade !== undefined)
    attributes['messaging.message.delivery_count'] = options.attemptsMade + 1
  const { event } = options
  if (event !== undefined) {
    attributes['scheduling.payload.id'] = attributeText(String(event.id))
    attributes['scheduling.event.type'] = attributeText(String(event.type))
  }
  const traced = startSpan(`process ${destination}`, {
    kind: CONSUMER,
    attributes,
    ...(remote === undefined ? {} : { parent: remote.ctx, links: [remote.link] }),
  })
  return runInSpan(traced, work)
}
