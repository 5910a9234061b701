import { createHash } from 'node:crypto'
import type { AnyWebhookEvent, QueueDelivery, WebhookContext } from '@scheduling-kit/core'
import { jobKeyOf, type QueuedDelivery, queuedDelivery } from '@scheduling-kit/core/queue'

/** What a job holds, on either engine: the delivery as core's queue helpers keep it. */
export type EngineJob = QueuedDelivery & { key: string }

export function jobOf(
  event: AnyWebhookEvent,
  context: WebhookContext,
  delivery: QueueDelivery,
): EngineJob {
  return { ...queuedDelivery(event, context, delivery), key: delivery.key }
}

/** The key a job's id is made from: the delivery's, or a replay's own (`jobKeyOf`). */
export const jobKey = (job: EngineJob): string =>
  jobKeyOf({ key: job.key, ...(job.replay === undefined ? {} : { replay: job.replay }) }, job.key)

/** A UUID made from the delivery's key: every retry of one delivery is one job. */
export function uuidOf(key: string): string {
  const h = createHash('sha256').update(key).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The hex job id BullMQ takes (no ':'). */
export const hexIdOf = (key: string) => `wh-${createHash('sha256').update(key).digest('hex')}`
