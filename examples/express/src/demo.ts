// The README's demo: the fake scheduling service and this example app on loopback, driven end
// to end. Exits 0 when every check came out as expected.
import { EVENT_TYPES } from '@scheduling-kit/express'
import { connectAccount, startStack } from './stack.js'

const rows: Array<[string, string, string]> = []
const check = (what: string, expected: unknown, got: unknown) => {
  rows.push([what, String(expected), String(got)])
  console.log(`${String(expected) === String(got) ? 'ok  ' : 'FAIL'} ${what}: ${got}`)
}

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
  for (const type of EVENT_TYPES) await service.trigger(type)
  const handled = new Set(example.received.map((e) => e.type))
  check('event types verified and handled', 16, EVENT_TYPES.filter((t) => handled.has(t)).length)

  // 5. The receiver fails once: the service retries, the app handles it exactly once.
  stack.faults.failNextDeliveries = 1
  const { event, deliveries } = await service.trigger('event.canceled')
  check('first delivery while the app fails', 500, deliveries[0]?.status)
  await service.idle()
  const attempts = service.deliveries().filter((d) => d.payloadId === event.id)
  check('retry delivered', '500 then 200', attempts.map((d) => d.status).join(' then '))
  check('handled exactly once', 1, example.received.filter((e) => e.id === event.id).length)
} finally {
  await stack.close()
}

const width = Math.max(...rows.map((r) => r[0].length))
console.log(`\n${'check'.padEnd(width)}  ${'expected'.padEnd(12)}  got`)
for (const [what, expected, got] of rows) {
  console.log(
    `${what.padEnd(width)}  ${expected.padEnd(12)}  ${got}${expected === got ? '' : '   <-- unexpected'}`,
  )
}
const ok = rows.every(([, e, g]) => e === g)
console.log(
  ok ? '\nDemo finished: every check as expected.' : '\nDemo finished with unexpected results.',
)
process.exitCode = ok ? 0 : 1
