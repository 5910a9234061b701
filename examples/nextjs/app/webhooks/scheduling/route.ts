// POST /webhooks/scheduling: every connected account's webhook points here. Core's Fetch handler
// verifies each delivery over the bytes Next.js hands over untouched, with the secret of the
// account's own webhook, and runs the handlers registered below once per payload.
import { createWebhookHandler } from '@scheduling-kit/core/webhooks'
import { recordBooking } from '@/lib/bookings'
import { scheduling } from '@/lib/scheduling'

const webhooks = createWebhookHandler(scheduling).on(
  ['event.created', 'event.rescheduled', 'event.canceled'],
  async (event, { account }) => {
    await recordBooking({
      payloadId: event.id,
      account: account ?? 'unknown',
      type: event.type,
      eventId: event.payload?.id,
      startAt: event.payload?.start_at,
    })
  },
)

export const POST = (request: Request) => webhooks.fetch(request)
