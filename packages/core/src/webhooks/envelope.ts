import { serverText, WebhookError } from '../errors/errors.js'
import { toBytes, utf8 } from '../platform/bytes.js'
import type { AnyWebhookEvent } from './events.js'
import type { RawBody } from './signature.js'

const PAYLOAD_ID = /^payload_[A-Za-z0-9_-]+$/
const MAX_TYPE_LENGTH = 200

/**
 * Parses a webhook body into a typed event. Throws a `WebhookError` (`invalid_json`,
 * `invalid_envelope`, `invalid_type` or `invalid_id`) and nothing else. Fields the toolkit does
 * not know are kept; an unknown `type` is valid (typed as `UnknownWebhookEvent`).
 *
 * This does not verify the signature: use `constructEvent` for a request from the network.
 *
 * @example
 * ```ts
 * const event = parseEnvelope(rawBody)
 * if (isEventType(event, 'event.created')) console.log(event.payload.start_at)
 * ```
 */
export function parseEnvelope(body: RawBody): AnyWebhookEvent {
  let value: unknown
  try {
    value = JSON.parse(typeof body === 'string' ? body : utf8(toBytes(body)))
  } catch {
    throw new WebhookError('invalid_json', 'The webhook body is not valid JSON (UTF-8).')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WebhookError(
      'invalid_envelope',
      'The webhook body is JSON but not an object { "type": ..., "id": ... }.',
    )
  }
  const { type, id, data } = value as { type?: unknown; id?: unknown; data?: unknown }
  const other = (data as { type?: unknown } | null | undefined)?.type
  if (type === undefined && typeof other === 'string')
    throw new WebhookError(
      'other_product',
      `A delivery of the vendor's other product (data.type "${serverText(other, 64)}"): its webhook points here by mistake.`,
    )
  if (typeof type !== 'string' || type === '' || type.length > MAX_TYPE_LENGTH) {
    throw new WebhookError(
      'invalid_type',
      'The webhook body has no valid "type" (an event type such as "event.created").',
    )
  }
  if (typeof id !== 'string' || !PAYLOAD_ID.test(id)) {
    throw new WebhookError(
      'invalid_id',
      'The webhook body has no valid "id" (a payload id, "payload_<id>").',
    )
  }
  return value as AnyWebhookEvent
}
