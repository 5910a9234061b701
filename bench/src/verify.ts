import { createHmac, timingSafeEqual } from 'node:crypto'
import { verify as octokitVerify } from '@octokit/webhooks-methods'
import * as nodeEntry from '@scheduling-kit/core'
import { type Case, measure, ratio, type Target, table } from './harness.js'

const SECRET = 'whsec_bench_5b0f7c1e9a'

/** A realistic 2 KiB `event.created` body. */
function body2k(): Uint8Array<ArrayBuffer> {
  const event = {
    type: 'event.created',
    id: 'payload_01HYBENCH00000000000000',
    version: '2020-11-18',
    occurred_at: '2024-05-01T14:03:22Z',
    payload: {
      id: 'event_01HYBENCH',
      state: 'confirmed',
      start_at: '2024-05-02T09:00:00Z',
      end_at: '2024-05-02T09:30:00Z',
      attendees: [{ id: 'attendee_1', display_name: 'Ada Lovelace', email: 'ada@example.com' }],
      description: '',
    },
  }
  let text = JSON.stringify(event)
  event.payload.description = 'x'.repeat(2048 - text.length)
  text = JSON.stringify(event)
  if (text.length !== 2048) throw new Error(`body is ${text.length} bytes`)
  return new TextEncoder().encode(text)
}

export async function verifyBench(): Promise<Target[]> {
  const webEntry = (await import(
    new URL('./index.js', import.meta.resolve('@scheduling-kit/core')).href
  )) as typeof nodeEntry
  const body = body2k()
  const text = new TextDecoder().decode(body)
  const header = await nodeEntry.signPayload(body, SECRET)
  const lower = header.toLowerCase()
  const key = new TextEncoder().encode(SECRET)

  const cases: Case[] = [
    {
      name: 'hand-written createHmac + timingSafeEqual',
      run: () => {
        const expected = createHmac('sha256', SECRET).update(body).digest()
        const given = Buffer.from(header.slice(7), 'hex')
        return given.length === expected.length && timingSafeEqual(expected, given)
      },
    },
    {
      name: 'scheduling-kit, node entry',
      async: true,
      run: () => nodeEntry.verifySignature(body, header, SECRET),
    },
    {
      name: 'scheduling-kit, web entry (cached key)',
      async: true,
      run: () => webEntry.verifySignature(body, header, SECRET),
    },
    {
      name: 'Web Crypto, key imported per call',
      async: true,
      run: async () => {
        const k = await crypto.subtle.importKey(
          'raw',
          key,
          { name: 'HMAC', hash: 'SHA-256' },
          false,
          ['verify'],
        )
        const sig = Buffer.from(header.slice(7), 'hex')
        return crypto.subtle.verify('HMAC', k, sig, body)
      },
    },
    {
      name: '@octokit/webhooks-methods (lower-case hex)',
      async: true,
      run: () => octokitVerify(SECRET, text, lower),
    },
  ]
  for (const c of cases) {
    if ((await c.run()) !== true) throw new Error(`${c.name} does not verify the benchmark body`)
  }
  if ((await octokitVerify(SECRET, text, header)) !== false)
    throw new Error('octokit is expected to reject upper-case hex')

  const results = await measure(cases)
  table('Verify a signed 2 KiB webhook body', results, cases[0]!.name)
  const name = (i: number) => cases[i]!.name
  return [
    {
      what: 'verify, node entry / hand-written baseline',
      ratio: ratio(results, name(1), name(0)),
      limit: 1.15,
      kind: 'max',
    },
    {
      what: 'verify, Web Crypto: key per call / cached key',
      ratio: ratio(results, name(3), name(2)),
      limit: 1.3,
      kind: 'min',
    },
  ]
}
