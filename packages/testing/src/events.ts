import { randomBytes } from 'node:crypto'
import type {
  AnyWebhookEvent,
  EventResource,
  WebhookEvent,
  WebhookEventType,
} from '@scheduling-kit/core'

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex').toUpperCase()}`

const STATES: Partial<Record<WebhookEventType, string>> = {
  'event.created': 'confirmed',
  'event.requested': 'awaiting_approval',
  'event.approved': 'confirmed',
  'event.declined': 'declined',
  'event.rescheduled': 'confirmed',
  'event.changed': 'confirmed',
  'event.canceled': 'canceled',
  'event.checkout.pending': 'awaiting_checkout',
  'event.checkout.expired': 'checkout_expired',
  'event.checkout.completed': 'confirmed',
}

function eventResource(type: string, now: Date): EventResource {
  const start = new Date(now.getTime() + 24 * 3600_000)
  start.setUTCHours(9, 0, 0, 0)
  const end = new Date(start.getTime() + 30 * 60_000)
  const eventId = id('event')
  const resource: EventResource = {
    id: eventId,
    state: STATES[type as WebhookEventType] ?? 'confirmed',
    start_at: start.toISOString(),
    end_at: end.toISOString(),
    created_at: now.toISOString(),
    duration: 30,
    description: 'Intro call',
    url: `https://scheduling.example/events/${eventId}`,
    attendees: [
      {
        id: id('attendee'),
        display_name: 'Ada Lovelace',
        email: 'ada@example.test',
        is_organizer: true,
        response_status: 'accepted',
        time_zone: 'Europe/London',
        fields: [],
        first_name: 'Ada',
        last_name: 'Lovelace',
        marketing_opt_in: false,
      },
      {
        id: id('attendee'),
        display_name: 'Grace Hopper',
        email: 'grace@example.test',
        is_organizer: false,
        response_status: type.startsWith('event.attendee.canceled') ? 'declined' : 'accepted',
        time_zone: 'America/New_York',
        fields: [{ label: 'Topic', value: 'Compilers' }],
      },
    ],
    conferencing: {
      type: 'zoom',
      join_url: 'https://zoom.example/j/123456789',
      meeting_id: '123456789',
      instructions: '',
    },
    link: {
      id: id('link'),
      slug: 'intro-call',
      name: 'Intro call',
      metadata: { source: 'website' },
    },
  }
  if (type === 'event.rescheduled') {
    resource.rescheduled_at = now.toISOString()
    resource.original_start_at = new Date(start.getTime() - 24 * 3600_000).toISOString()
    resource.original_end_at = new Date(end.getTime() - 24 * 3600_000).toISOString()
  }
  if (type.startsWith('event.checkout.'))
    resource.payment = {
      state: type === 'event.checkout.completed' ? 'paid' : 'awaiting_checkout',
      amount_total: 5000,
    }
  if (type === 'event.canceled') {
    resource.cancel_reason = 'Something came up'
    resource.canceled_at = now.toISOString()
  }
  return resource
}

function payloadFor(type: string, now: Date): unknown {
  if (type.startsWith('event.')) return eventResource(type, now)
  if (type.startsWith('poll.')) {
    return {
      id: id('response'),
      poll_id: id('poll'),
      respondent: { name: 'Grace Hopper', email: 'grace@example.test' },
      choices: [{ start_at: now.toISOString(), answer: 'yes' }],
      created_at: now.toISOString(),
    }
  }
  if (type === 'workflow.action.triggered') {
    // The published schema: the action (`send_custom_email` or `trigger_automation`, its
    // properties) and the Event it ran for.
    return {
      action: {
        id: id('action'),
        created_at: now.toISOString(),
        type: 'send_custom_email',
        properties: { subject: 'See you tomorrow', to: 'ada@example.test' },
      },
      event: eventResource('event.created', now),
    }
  }
  return {}
}

export type TestEventOverrides = Partial<Omit<AnyWebhookEvent, 'payload'>> & {
  payload?: Record<string, unknown>
}

/**
 * A realistic webhook envelope of any of the 16 types (or an unknown one): `type`, a fresh
 * `payload_<id>`, `version`, `occurred_at`, and a `payload` shaped as the service sends it (the
 * Event resource for `event.*`). Overrides replace envelope fields; `payload` is merged.
 *
 * @example
 * ```ts
 * const event = createTestEvent('event.canceled', { payload: { id: 'event_1' } })
 * ```
 */
export function createTestEvent<T extends WebhookEventType>(
  type: T,
  overrides?: TestEventOverrides,
): WebhookEvent<T>
export function createTestEvent(type: string, overrides?: TestEventOverrides): AnyWebhookEvent
export function createTestEvent(type: string, overrides: TestEventOverrides = {}): AnyWebhookEvent {
  const now = new Date()
  const { payload, ...envelope } = overrides
  const base = payloadFor(type, now) as Record<string, unknown>
  return {
    type,
    id: id('payload') as `payload_${string}`,
    version: '2020-11-18',
    occurred_at: now.toISOString(),
    ...envelope,
    payload: { ...base, ...payload },
  } as AnyWebhookEvent
}
