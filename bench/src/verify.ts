// Verifying a signed body, in process: scheduling-kit beside the floor (node:crypto by hand) and
// the anchors (octokit, stripe, svix, standardwebhooks), each with its own signature scheme,
// over the same bytes, at 2 KiB and 1 MiB.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { verify as octokitVerify } from '@octokit/webhooks-methods'
import * as nodeEntry from '@scheduling-kit/core'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { Webhook as SvixWebhook } from 'svix'
import {
  answerParent,
  type Case,
  type Measured,
  measure,
  measureInChild,
  ratio,
  row,
  type Target,
} from './harness.js'

const SECRET = 'whsec_bench_5b0f7c1e9a'

/** A realistic `event.created` body of exactly `size` bytes. */
export function eventBody(size: number, id = 'payload_01HYBENCH00000000000000'): string {
  const event = {
    type: 'event.created',
    id,
    version: '2020-11-18',
    occurred_at: new Date().toISOString(),
    payload: {
      id: 'event_01HYBENCH',
      state: 'confirmed',
      start_at: '2024-05-02T09:00:00Z',
      end_at: '2024-05-02T09:30:00Z',
      attendees: [{ id: 'attendee_1', display_name: 'Ada Lovelace', email: 'ada@example.com' }],
      description: '',
    },
  }
  event.payload.description = 'x'.repeat(size - JSON.stringify(event).length)
  const text = JSON.stringify(event)
  if (text.length !== size) throw new Error(`body is ${text.length} bytes`)
  return text
}

/** The floor: what a careful developer writes by hand with node:crypto. */
function floor(body: Buffer | string, header: string): boolean {
  const expected = createHmac('sha256', SECRET).update(body).digest()
  const given = Buffer.from(header.slice(7), 'hex')
  return given.length === expected.length && timingSafeEqual(expected, given)
}

const FLOOR = 'floor: createHmac + timingSafeEqual, Buffer'
const FLOOR_STRING = 'floor: createHmac + timingSafeEqual, string'
const OURS = 'scheduling-kit verifySignature, Buffer'
const OURS_STRING = 'scheduling-kit verifySignature, string'
const WEB_CACHED = 'scheduling-kit web entry (Web Crypto, key cached), Buffer'
const WEB_PER_CALL = 'Web Crypto, key imported per call, Buffer'

type Group = 'buffer' | 'string' | 'anchors' | 'web'
const GROUPS: Group[] = ['buffer', 'string', 'anchors', 'web']

/** The cases of one group, its baseline first; each checked to verify the body before timing. */
async function casesOf(size: number, group: Group): Promise<Case[]> {
  const text = eventBody(size)
  const body = Buffer.from(text)
  const header = await nodeEntry.signPayload(body, SECRET)
  // Every case is awaited in the same loop, as a caller of a promise-returning API awaits it:
  // the floor's await is part of the baseline, not of our overhead. The sync-loop floor row
  // shows what that await costs.
  const floorCase: Case = { name: FLOOR, async: true, run: () => floor(body, header) }
  if (group === 'buffer') {
    return [
      floorCase,
      { name: OURS, async: true, run: () => nodeEntry.verifySignature(body, header, SECRET) },
      { name: 'floor, Buffer, in a sync loop (no await)', run: () => floor(body, header) },
    ]
  }
  if (group === 'string') {
    if ((await nodeEntry.verifySignature(`${text} `, header, SECRET)) !== false)
      throw new Error('a changed string body must not verify')
    return [
      { name: FLOOR_STRING, async: true, run: () => floor(text, header) },
      {
        name: OURS_STRING,
        async: true,
        run: () => nodeEntry.verifySignature(text, header, SECRET),
      },
    ]
  }
  if (group === 'web') {
    const webEntry = (await import(
      new URL('./index.js', import.meta.resolve('@scheduling-kit/core')).href
    )) as typeof nodeEntry
    const key = new TextEncoder().encode(SECRET)
    return [
      floorCase,
      { name: WEB_CACHED, async: true, run: () => webEntry.verifySignature(body, header, SECRET) },
      {
        name: WEB_PER_CALL,
        async: true,
        run: async () => {
          const k = await crypto.subtle.importKey(
            'raw',
            key,
            { name: 'HMAC', hash: 'SHA-256' },
            false,
            ['verify'],
          )
          return crypto.subtle.verify('HMAC', k, Buffer.from(header.slice(7), 'hex'), body)
        },
      },
    ]
  }
  const lower = header.toLowerCase()
  if ((await octokitVerify(SECRET, text, header)) !== false)
    throw new Error('octokit is expected to reject upper-case hex')
  const stripe = new Stripe('sk_test_bench')
  const stripeHeader = stripe.webhooks.generateTestHeaderString({ payload: text, secret: SECRET })
  // svix and standardwebhooks: a base64 secret, the id and timestamp signed with the body.
  const base64Secret = Buffer.from(SECRET).toString('base64')
  const standard = new StandardWebhook(base64Secret)
  const svix = new SvixWebhook(`whsec_${base64Secret}`)
  const at = new Date()
  const swHeaders = {
    'webhook-id': 'msg_bench',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': standard.sign('msg_bench', at, text),
  }
  const svixHeaders = {
    'svix-id': 'msg_bench',
    'svix-timestamp': swHeaders['webhook-timestamp'],
    'svix-signature': svix.sign('msg_bench', at, text),
  }
  return [
    floorCase,
    {
      name: '@octokit/webhooks-methods verify, string',
      async: true,
      run: () => octokitVerify(SECRET, text, lower),
    },
    {
      name: 'stripe constructEvent (parses JSON too), Buffer',
      async: true,
      run: () => stripe.webhooks.constructEvent(body, stripeHeader, SECRET, 3600) !== undefined,
    },
    {
      name: 'standardwebhooks verify (parses JSON too), string',
      async: true,
      run: () => standard.verify(text, swHeaders) !== undefined,
    },
    {
      name: 'svix verify (parses JSON too), string',
      async: true,
      run: () => svix.verify(text, svixHeaders) !== undefined,
    },
  ]
}

async function measureGroup(size: number, group: Group): Promise<Measured[]> {
  const cases = await casesOf(size, group)
  for (const c of cases) {
    if ((await c.run()) !== true) throw new Error(`${c.name} does not verify the benchmark body`)
  }
  return measure(cases, size > 65536 ? { rounds: 15, batchMs: 40 } : {})
}

export async function verifyBench(): Promise<Target[]> {
  const targets: Target[] = []
  for (const size of [2048, 1024 * 1024]) {
    const kib = `${size / 1024} KiB`
    const groups = new Map<Group, Measured[]>()
    for (const group of GROUPS) {
      // Each group in its own process: see measureInChild.
      groups.set(
        group,
        await measureInChild(import.meta.url, ['verify-group', String(size), group]),
      )
    }
    console.log(`\nVerify a signed ${kib} webhook body (node:crypto unless named)`)
    console.log('| case | ns/op | ops/s | vs the floor of its rounds | spread |')
    console.log('|---|---:|---:|---:|---:|')
    for (const [group, results] of groups) {
      for (const r of group === 'buffer' || group === 'string' ? results : results.slice(1))
        row(r, ratio(results, r.name, results[0]!.name))
    }
    const buffer = groups.get('buffer')!
    const string = groups.get('string')!
    targets.push(
      {
        what: `verify ${kib}, Buffer: ours / floor`,
        ratio: ratio(buffer, OURS, FLOOR),
        limit: 1.05,
        kind: 'max',
      },
      {
        what: `verify ${kib}, string: ours / floor`,
        ratio: ratio(string, OURS_STRING, FLOOR_STRING),
        limit: 1.05,
        kind: 'max',
      },
    )
    if (size === 2048)
      targets.push({
        what: `verify ${kib}, Web Crypto: key per call / cached key`,
        ratio: ratio(groups.get('web')!, WEB_PER_CALL, WEB_CACHED),
        limit: 1.3,
        kind: 'min',
      })
  }
  return targets
}

if (process.argv[2] === 'verify-group') {
  answerParent(await measureGroup(Number(process.argv[3]), process.argv[4] as Group))
}
