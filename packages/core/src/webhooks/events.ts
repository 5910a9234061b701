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

/**
 * One attendee of an Event. Every field is optional (the service publishes examples, not a
 * schema), and a field it adds later is kept and typed `unknown`.
 */
export interface EventAttendee {
  id?: string
  display_name?: string
  first_name?: string
  last_name?: string
  email?: string
  phone_number?: string
  fields?: unknown[]
  is_organizer?: boolean
  marketing_opt_in?: boolean
  /** `accepted` in the service's examples; others may appear. */
  response_status?: string
  time_zone?: string
  [field: string]: unknown
}

export interface EventConferencing {
  type?: string
  join_url?: string
  meeting_id?: string
  instructions?: string
  [field: string]: unknown
}

export interface SchedulingLink {
  id?: string
  slug?: string
  name?: string
  /** Key/values given on the link; they reach the webhook. */
  metadata?: Record<string, unknown>
  [field: string]: unknown
}

/** An Event's payment, when the link takes one. */
export interface EventPayment {
  state?: 'awaiting_checkout' | 'paid' | (string & {})
  /** In cents. */
  amount_total?: number
  [field: string]: unknown
}

/**
 * The Event resource carried by every `event.*` webhook. Every field is optional, and a field
 * the service adds later is kept and typed `unknown`. It has no `updated_at`: the envelope's
 * `occurred_at` is the only order a receiver has.
 */
export interface EventResource {
  id?: string
  uuid?: string
  state?: EventState | (string & {})
  summary?: string
  start_at?: string
  end_at?: string
  created_at?: string
  description?: string
  additional_info?: string
  duration?: number
  location?: unknown
  cancel_reason?: string
  canceled_at?: string
  rescheduled_at?: string
  reschedule_reason?: string
  original_start_at?: string
  original_end_at?: string
  url?: string
  attendees?: EventAttendee[]
  conferencing?: EventConferencing
  link?: SchedulingLink
  poll?: unknown
  scope?: unknown
  scheduler?: unknown
  organizer?: unknown
  payment?: EventPayment
  metadata?: Record<string, unknown>
  is_group_session?: boolean
  buffer_before?: number
  buffer_after?: number
  description_settings?: unknown
  location_settings?: unknown
  [field: string]: unknown
}

/** The action of a `workflow.action.triggered` webhook (its published schema). */
export interface WorkflowAction {
  id?: string
  created_at?: string
  type?: 'send_custom_email' | 'trigger_automation' | (string & {})
  properties?: Record<string, unknown>
  [field: string]: unknown
}

/** The payload of `workflow.action.triggered`: the action and the Event it ran for. */
export interface WorkflowActionPayload {
  action?: WorkflowAction
  event?: EventResource
  [field: string]: unknown
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
  'workflow.action.triggered': WorkflowActionPayload
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
