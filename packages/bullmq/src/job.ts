import { createHash } from 'node:crypto'
import { ConfigError } from '@scheduling-kit/core'
import { encodeStoreKey, type QueuedDelivery } from '@scheduling-kit/core/queue'

/** Default name of the queue. */
export const DEFAULT_QUEUE_NAME = 'scheduling-webhooks'

/** What a job holds: the event and the parts of its delivery context a handler may use. */
export type WebhookJobData = QueuedDelivery

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
