// Declaration merging as a user writes it, against the published type declarations.
import { createWebhookHandler, type OpenRecord, type WebhookEvent } from '@scheduling-kit/core'
import { describe, expectTypeOf, it } from 'vitest'

declare module '@scheduling-kit/core' {
  interface CustomWebhookPayloads {
    'poll.response.created': { poll_id: string; answers: string[] }
  }
}

describe('declaration merging', () => {
  it('replaces the payload type of the declared event and leaves the others alone', () => {
    expectTypeOf<WebhookEvent<'poll.response.created'>['payload']>().toEqualTypeOf<
      { poll_id: string; answers: string[] } | undefined
    >()
    expectTypeOf<WebhookEvent<'poll.response.updated'>['payload']>().toEqualTypeOf<
      OpenRecord | undefined
    >()
    createWebhookHandler('s').on('poll.*', (event) => {
      if (event.type === 'poll.response.created')
        expectTypeOf(event.payload!.answers).toEqualTypeOf<string[]>()
    })
  })
})
