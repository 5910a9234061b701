import { describe, expectTypeOf, it } from 'vitest'
import {
  type AnyWebhookEvent,
  createWebhookHandler,
  type EventResource,
  isEventType,
  type OpenRecord,
  type PayloadId,
  parseEnvelope,
  type WebhookEvent,
  type WebhookEventType,
  type WorkflowActionPayload,
} from '../../src/index.js'

describe('WebhookEvent', () => {
  it('narrows on type: the Event resource for event.*, the published action schema for workflow.*, an open record for poll.*', () => {
    const event = {} as WebhookEvent
    switch (event.type) {
      case 'event.canceled':
        expectTypeOf(event).toEqualTypeOf<WebhookEvent<'event.canceled'>>()
        expectTypeOf(event.payload).toEqualTypeOf<EventResource | undefined>()
        expectTypeOf(event.payload!.cancel_reason).toEqualTypeOf<string | undefined>()
        // The published fields, and one the service adds later: kept, typed unknown.
        expectTypeOf(event.payload!.payment!.amount_total).toEqualTypeOf<number | undefined>()
        expectTypeOf(event.payload!.attendees![0]!.first_name).toEqualTypeOf<string | undefined>()
        expectTypeOf(event.payload!.added_later).toEqualTypeOf<unknown>()
        break
      case 'workflow.action.triggered':
        expectTypeOf(event.payload).toEqualTypeOf<WorkflowActionPayload | undefined>()
        expectTypeOf(event.payload!.action!.type).toEqualTypeOf<
          'send_custom_email' | 'trigger_automation' | (string & {}) | undefined
        >()
        expectTypeOf(event.payload!.event).toEqualTypeOf<EventResource | undefined>()
        break
      case 'poll.response.created':
        expectTypeOf(event.payload).toEqualTypeOf<OpenRecord | undefined>()
        break
      default:
        expectTypeOf(event.type).toEqualTypeOf<
          Exclude<
            WebhookEventType,
            'event.canceled' | 'workflow.action.triggered' | 'poll.response.created'
          >
        >()
    }
    expectTypeOf(event.id).toEqualTypeOf<PayloadId>()
    expectTypeOf(event.version).toEqualTypeOf<string | undefined>()
    expectTypeOf(event.occurred_at).toEqualTypeOf<string | undefined>()
  })

  it('parseEnvelope returns known or unknown events; isEventType narrows exactly', () => {
    const event = parseEnvelope('')
    expectTypeOf(event).toEqualTypeOf<AnyWebhookEvent>()
    expectTypeOf(event.type).toEqualTypeOf<string>()
    if (isEventType(event, 'event.checkout.completed')) {
      expectTypeOf(event).toEqualTypeOf<WebhookEvent<'event.checkout.completed'>>()
    }
    if (isEventType(event, ['poll.response.updated', 'event.created'])) {
      expectTypeOf(event.type).toEqualTypeOf<'poll.response.updated' | 'event.created'>()
    }
  })
})

describe('handler registration', () => {
  it('gives each handler the events its pattern matches', () => {
    createWebhookHandler('s')
      .on('event.created', (event, context) => {
        expectTypeOf(event).toEqualTypeOf<WebhookEvent<'event.created'>>()
        expectTypeOf(context.webhookId).toEqualTypeOf<string | undefined>()
      })
      .on('event.checkout.*', (event) => {
        expectTypeOf(event.type).toEqualTypeOf<
          'event.checkout.pending' | 'event.checkout.expired' | 'event.checkout.completed'
        >()
      })
      .on(['event.declined', 'poll.response.updated'], (event) => {
        expectTypeOf(event.type).toEqualTypeOf<'event.declined' | 'poll.response.updated'>()
      })
      .on('*', (event) => expectTypeOf(event).toEqualTypeOf<AnyWebhookEvent>())
      .onAny((event) => expectTypeOf(event).toEqualTypeOf<AnyWebhookEvent>())
  })

  it('types the declarative on map the same way', () => {
    createWebhookHandler({
      secret: 's',
      on: {
        'event.attendee.*': (event) => {
          expectTypeOf(event.type).toEqualTypeOf<
            'event.attendee.added' | 'event.attendee.canceled' | 'event.attendee.rescheduled'
          >()
        },
        'event.approved': [(event) => expectTypeOf(event.type).toEqualTypeOf<'event.approved'>()],
      },
    })
  })

  it('rejects misspelled types and patterns', () => {
    // @ts-expect-error: not an event type
    createWebhookHandler('s').on('event.create', () => {})
    // @ts-expect-error: not a prefix of any event type
    createWebhookHandler('s').on('evnt.*', () => {})
    // @ts-expect-error: not an event type
    createWebhookHandler({ secret: 's', on: { 'event.cancelled': () => {} } })
  })
})

describe('token store', () => {
  it('is implemented with three async methods', async () => {
    const { createTokenManager, createOAuthClient } = await import('../../src/index.js')
    const rows = new Map<string, import('../../src/index.js').TokenRecord>()
    const store: import('../../src/index.js').TokenStore = {
      get: async (key) => rows.get(key),
      set: async (key, record) => void rows.set(key, record),
      delete: async (key) => void rows.delete(key),
    }
    const oauth = createOAuthClient({
      clientId: 'a',
      clientSecret: 'b',
      redirectUri: 'https://x.test/cb',
      authUrl: 'https://x.test',
    })
    expectTypeOf(createTokenManager({ oauth, store }).getAccessToken('k')).toEqualTypeOf<
      Promise<string>
    >()
  })
})
