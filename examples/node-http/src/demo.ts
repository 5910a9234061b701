// Starts the app on loopback, sends it what the service would send, and prints what happened.
import type { AddressInfo } from 'node:net'
import { EVENT_TYPES, signPayload } from '@scheduling-kit/core'
import { createApp } from './app.js'

const secret = `demo-secret-${Math.random().toString(36).slice(2)}`
const failNext = { count: 0 }
const app = createApp({ secret, failNext })
await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/webhooks/scheduling`

async function send(body: string, signature?: string): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'Scheduling Webhooks (demo)',
      'x-service-signature': signature ?? (await signPayload(body, secret)),
      'x-service-webhook-id': 'wh_demo',
    },
    body,
  })
  await res.arrayBuffer()
  return res.status
}

const envelope = (type: string, n: number) =>
  JSON.stringify({
    type,
    id: `payload_demo${n}`,
    version: '2020-11-18',
    occurred_at: new Date().toISOString(),
    payload: { id: `event_${n}`, state: 'confirmed' },
  })

const rows: Array<[string, string, string]> = []
let ok = true
const check = (what: string, expected: string, got: string) => {
  rows.push([what, expected, got])
  if (expected !== got) ok = false
}

for (const [i, type] of EVENT_TYPES.entries())
  check(`deliver ${type}`, '200', String(await send(envelope(type, i))))
check('all 16 types handled', '16', String(app.received.length))
check('same payload again (retry)', '200', String(await send(envelope('event.created', 0))))
check('  handler runs once', '16', String(app.received.length))
failNext.count = 1
check('handler fails', '500', String(await send(envelope('event.canceled', 100))))
check('service retries', '200', String(await send(envelope('event.canceled', 100))))
check(
  '  delivered exactly once',
  '1',
  String(app.received.filter((e) => e.id === 'payload_demo100').length),
)
check('unknown future type', '200', String(await send(envelope('meeting.teleported', 101))))
const body = envelope('event.created', 102)
check(
  'tampered body',
  '401',
  String(await send(body.replace('confirmed', 'canceled'), await signPayload(body, secret))),
)
check('wrong secret', '401', String(await send(body, await signPayload(body, 'not-the-secret'))))

app.server.close()
const width = Math.max(...rows.map((r) => r[0].length))
console.log(`\n${'check'.padEnd(width)}  expected  got`)
for (const [what, expected, got] of rows) {
  console.log(
    `${what.padEnd(width)}  ${expected.padEnd(8)}  ${got}${expected === got ? '' : '   <-- unexpected'}`,
  )
}
console.log(
  ok ? '\nDemo finished: every check as expected.' : '\nDemo finished with unexpected results.',
)
process.exitCode = ok ? 0 : 1
