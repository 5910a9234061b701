/** The 16 event types the service sends (spec section 6.1). */
export const EVENT_TYPES = [
  'event.created',
  'event.requested',
  'event.approved',
  'event.declined',
  'event.rescheduled',
  'event.changed',
  'event.canceled',
  'event.checkout.pending',
  'event.checkout.expired',
  'event.checkout.completed',
  'event.attendee.added',
  'event.attendee.canceled',
  'event.attendee.rescheduled',
  'poll.response.created',
  'poll.response.updated',
  'workflow.action.triggered',
] as const

export type WebhookEventType = (typeof EVENT_TYPES)[number]

const KNOWN = /* @__PURE__ */ new Set<string>(EVENT_TYPES)

/** True when `type` is one of the 16 known event types. */
export function isKnownEventType(type: string): type is WebhookEventType {
  return KNOWN.has(type)
}

/** Event states seen in the service's examples; others may appear. */
export type EventState =
  | 'confirmed'
  | 'canceled'
  | 'awaiting_reschedule'
  | 'awaiting_checkout'
  | 'checkout_expired'
  | 'awaiting_approval'
  | 'declined'
  | 'tentative'

export interface EventAttendee {
  id?: string
  display_name?: string
  email?: string
  fields?: unknown[]
  is_organizer?: boolean
  response_status?: string
  time_zone?: string
}

export interface EventConferencing {
  type?: string
  join_url?: string
  meeting_id?: string
  instructions?: string
}

export interface SchedulingLink {
  id?: string
  slug?: string
  name?: string
  /** Key/values given on the link; they reach the webhook. */
  metadata?: Record<string, unknown>
}

/** The Event resource carried by every `event.*` webhook. All fields are optional. */
export interface EventResource {
  id?: string
  state?: EventState | (string & {})
  start_at?: string
  end_at?: string
  created_at?: string
  description?: string
  duration?: number
  cancel_reason?: string
  canceled_at?: string
  url?: string
  attendees?: EventAttendee[]
  conferencing?: EventConferencing
  link?: SchedulingLink
}

/** Shape of payloads the service has not published. */
export type OpenRecord = Record<string, unknown>

/** The default payload type of each event type. */
export interface DefaultWebhookPayloads {
  'event.created': EventResource
  'event.requested': EventResource
  'event.approved': EventResource
  'event.declined': EventResource
  'event.rescheduled': EventResource
  'event.changed': EventResource
  'event.canceled': EventResource
  'event.checkout.pending': EventResource
  'event.checkout.expired': EventResource
  'event.checkout.completed': EventResource
  'event.attendee.added': EventResource
  'event.attendee.canceled': EventResource
  'event.attendee.rescheduled': EventResource
  'poll.response.created': OpenRecord
  'poll.response.updated': OpenRecord
  'workflow.action.triggered': OpenRecord
}

/**
 * Declare your own payload types here by declaration merging; they replace the defaults:
 *
 * ```ts
 * declare module '@scheduling-kit/core' {
 *   interface CustomWebhookPayloads {
 *     'poll.response.created': { poll_id: string; answers: string[] }
 *   }
 * }
 * ```
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by users through declaration merging
export interface CustomWebhookPayloads {}

export type WebhookPayload<T extends WebhookEventType> = T extends keyof CustomWebhookPayloads
  ? CustomWebhookPayloads[T]
  : DefaultWebhookPayloads[T]

/** A payload identifier, `payload_<id>`. */
export type PayloadId = `payload_${string}`

interface EnvelopeFields {
  id: PayloadId
  /** API version of the payload, e.g. `2020-11-18` (in the service's examples, not the spec). */
  version?: string
  /** When the change happened, ISO 8601. */
  occurred_at?: string
}

/** One known webhook event; `WebhookEvent<'event.created'>` is the `event.created` event. */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = {
  [K in T]: EnvelopeFields & { type: K; payload?: WebhookPayload<K> }
}[T]

/** An event whose type this version of the toolkit does not know (sent by a newer service). */
export interface UnknownWebhookEvent extends EnvelopeFields {
  type: string
  payload?: unknown
}

/** Whatever `parseEnvelope` returns: a known event, or an unknown one kept for forward compatibility. */
export type AnyWebhookEvent = WebhookEvent | UnknownWebhookEvent

/** Narrows any event to one known type (or several). */
export function isEventType<T extends WebhookEventType>(
  event: AnyWebhookEvent,
  type: T | readonly T[],
): event is WebhookEvent<T> {
  return typeof type === 'string'
    ? event.type === type
    : (type as readonly string[]).includes(event.type)
}
