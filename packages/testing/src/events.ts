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
    return {
      workflow_id: id('workflow'),
      action: { type: 'send_email', to: 'ada@example.test' },
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
