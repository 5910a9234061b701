import { createHash } from 'node:crypto'
import { type AnyWebhookEvent, ConfigError } from '@scheduling-kit/core'
import { encodeStoreKey, type QueuedDelivery } from '@scheduling-kit/core/queue'

/** Default name of the queue. */
export const DEFAULT_QUEUE_NAME = 'scheduling-webhooks'
/** Default schema of the queue's tables (pg-boss's, and the worker's dedupe table). */
export const DEFAULT_QUEUE_SCHEMA = 'scheduling_kit_queue'

/** What a job holds: the event and the parts of its delivery context a handler may use. */
export type PostgresJobData = QueuedDelivery

/**
 * The job id of a delivery: a UUID made from the SHA-256 of its dedupe key (pg-boss ids are
 * UUIDs), so every retry of one delivery maps to one job. The key is encoded losslessly first:
 * two keys that differ in a lone surrogate are two jobs.
 */
export function jobIdFor(key: string): string {
  const h = createHash('sha256').update(encodeStoreKey(key)).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** The queue's name, checked as pg-boss checks it. */
export function checkQueueName(who: string, name: string | undefined): string {
  const value = name ?? DEFAULT_QUEUE_NAME
  if (typeof value !== 'string' || !/^[\w.\-/]{1,100}$/.test(value)) {
    throw new ConfigError(
      `${who}: queueName must be 1 to 100 letters, digits, '_', '-', '.' or '/'.`,
    )
  }
  return value
}

/** A schema name: a plain SQL identifier. */
export function checkSchema(who: string, schema: string | undefined): string {
  const value = schema ?? DEFAULT_QUEUE_SCHEMA
  if (typeof value !== 'string' || !/^[a-z_][a-z0-9_]{0,49}$/.test(value)) {
    throw new ConfigError(
      `${who}: schema must be a lower-case SQL identifier (letters, digits, '_'), at most 50 characters.`,
    )
  }
  return value
}

/**
 * The key a delivery's job is ordered by when the queue keeps order per Event: the Event's id
 * (or URI) its payload names, under the connected account when the delivery has one (two
 * accounts that see one Event are ordered apart: one's failing change never holds the
 * other's); else the delivery's own key, which orders it against nothing. Length-prefixed: no
 * account can make two pairs collide.
 */
export function orderKeyOf(event: AnyWebhookEvent, deliveryKey: string, account?: string): string {
  const payload = (event as { payload?: { id?: unknown; uri?: unknown } }).payload
  const id =
    payload !== null && typeof payload === 'object'
      ? typeof payload.id === 'string'
        ? payload.id
        : payload.uri
      : undefined
  if (typeof id !== 'string' || id.length === 0 || id.length > 256) return `delivery:${deliveryKey}`
  return account === undefined ? `event:${id}` : `account-event:${account.length}:${account}:${id}`
}
