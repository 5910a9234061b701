import { createHash } from 'node:crypto'
import { type AnyWebhookEvent, ConfigError } from '@scheduling-kit/core'
import { encodeStoreKey } from '@scheduling-kit/core/queue'

/** Default name of the queue. */
export const DEFAULT_QUEUE_NAME = 'scheduling-webhooks'

/** What a job holds: the event and the parts of its delivery context a handler may use. */
export interface WebhookJobData {
  event: AnyWebhookEvent
  webhookId: string | undefined
  secretIndex: number
  /** The connected account it belongs to, when the handler verifies with subscriptions. */
  account?: string
  /** The W3C trace context of the delivery's enqueue span, when OpenTelemetry recorded it. */
  trace?: Record<string, string>
  /** The delivery's dedupe key (its ledger id); the job id is its hash. */
  key?: string
}

/**
 * The job id of a delivery: `wh-` and the SHA-256 of its dedupe key, so every retry of one
 * delivery maps to one job, and the id has no `:` (which BullMQ ids may not contain). The key
 * is encoded losslessly first: two keys that differ in a lone surrogate are two jobs.
 */
export function jobIdFor(key: string): string {
  return `wh-${createHash('sha256').update(encodeStoreKey(key)).digest('hex')}`
}

export function checkQueueName(who: string, name: string | undefined): string {
  const value = name ?? DEFAULT_QUEUE_NAME
  if (typeof value !== 'string' || value === '' || value.includes(':')) {
    throw new ConfigError(`${who}: queueName must be a non-empty string without ':'.`)
  }
  return value
}
