// The README's demo: the fake scheduling service and this example app on loopback, driven end
// to end. Exits 0 when every check came out as expected.
import { EVENT_TYPES } from '@scheduling-kit/express'
import { createTestEvent, sendTestEvent } from '@scheduling-kit/testing'
import { createChecks, explain } from './checks.js'
import { connectAccount, startStack } from './stack.js'

const { check, finish } = createChecks()

const stack = await startStack({ autoApprove: false, retrySchedule: [300, 1_000] })
const { service, example, appUrl } = stack
try {
  console.log(`Fake scheduling service on ${service.url}, example app on ${appUrl}\n`)

  // 1. Connect an account through the OAuth flow (login, consent page, callback).
  const cookie = await connectAccount(appUrl, 'acct_demo')
  const stored = await example.store.get('acct_demo')
  check('OAuth flow: tokens stored for the account', 'acct_demo', stored?.account?.id)

  // 2. Call the API's /me through the app (bearer token from the token manager).
  const me = (await (await fetch(`${appUrl}/api/me`, { headers: { cookie } })).json()) as {
    id: string
  }
  check('GET /me through the app', 'acct_demo', me.id)

  // 3. The service expires the access token early; 20 requests at once: one refresh.
  service.expireToken('acct_demo')
  const refreshesBefore = service.auth.counters.refresh
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => fetch(`${appUrl}/api/me`, { headers: { cookie } })),
  )
  check(
    '20 concurrent calls after expiry answered 200',
    20,
    answers.filter((a) => a.status === 200).length,
  )
  check(
    'token endpoint refreshes for those 20 calls',
    1,
    service.auth.counters.refresh - refreshesBefore,
  )

  // 4. Every event type, signed by the service, verified and handled by the app.
  explain(
    "Every event type, signed by the service. The app's own event.canceled handler",
    'prints "canceled: <reason>" (src/app.ts): that is the next line.',
  )
  for (const type of EVENT_TYPES) await service.trigger(type)
  const handled = new Set(example.received.map((e) => e.type))
  check('event types verified and handled', 16, EVENT_TYPES.filter((t) => handled.has(t)).length)

  // 5. The receiver fails once: the service retries, the app handles it exactly once.
  explain(
    "The app's catch-all handler now throws once (a simulated outage). What a developer sees:",
    'scheduling-kit logs the failure with the stack of what threw, answers 500, and the',
    'service retries. "canceled: ..." shows twice: the handlers of one delivery run together,',
    'so the event.canceled handler ran on the failed attempt too (make handlers idempotent).',
  )
  stack.faults.failNextDeliveries = 1
  const { event, deliveries } = await service.trigger('event.canceled')
  check('first delivery while the app fails', 500, deliveries[0]?.status)
  await service.idle()
  const attempts = service.deliveries().filter((d) => d.payloadId === event.id)
  check('retry delivered', '500 then 200', attempts.map((d) => d.status).join(' then '))
  check('handled exactly once', 1, example.received.filter((e) => e.id === event.id).length)

  // 6. Requests signed with another secret: refused, and told once (then counted per minute).
  explain(
    'Three requests signed with the wrong secret: each is refused with 401. The log tells the',
    'first in full and counts the rest once a minute, so a flood cannot fill it.',
  )
  const forged: number[] = []
  for (let i = 0; i < 3; i++) {
    const answer = await sendTestEvent(
      `${appUrl}/webhooks/scheduling`,
      createTestEvent('event.created'),
      {
        secret: 'not-the-signing-secret',
      },
    )
    forged.push(answer.status)
  }
  check('wrong secret refused', '401 401 401', forged.join(' '))
} finally {
  await stack.close()
}

finish()
