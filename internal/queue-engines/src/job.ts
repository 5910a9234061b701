import { createHash } from 'node:crypto'
import type { AnyWebhookEvent, QueueDelivery, WebhookContext } from '@scheduling-kit/core'

/** What a job holds, on either engine: the event and what the worker needs of its delivery. */
export interface EngineJob {
  event: AnyWebhookEvent
  webhookId: string | undefined
  secretIndex: number
  account?: string
  key: string
  trace?: Record<string, string>
}

export function jobOf(
  event: AnyWebhookEvent,
  context: WebhookContext,
  delivery: QueueDelivery,
): EngineJob {
  return {
    event,
    webhookId: context.webhookId,
    secretIndex: context.secretIndex,
    key: delivery.key,
    ...(context.account === undefined ? {} : { account: context.account }),
    ...(delivery.trace === undefined ? {} : { trace: delivery.trace }),
  }
}

/** A UUID made from the delivery's key: every retry of one delivery is one job. */
export function uuidOf(key: string): string {
  const h = createHash('sha256').update(key).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The hex job id BullMQ takes (no ':'). */
export const hexIdOf = (key: string) => `wh-${createHash('sha256').update(key).digest('hex')}`
