// A whole delivery in process: handle() with the default in-memory dedupe store, every
// delivery a new payload id (the store full and evicting, as after a day of traffic), against
// the floor plus JSON.parse over the same bodies.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { WebhookRequest } from '@scheduling-kit/core'
import { createWebhookHandler, type Logger, MemoryDedupeStore } from '@scheduling-kit/core'
import {
  answerParent,
  type Case,
  type Measured,
  measure,
  measureInChild,
  ratio,
  type Target,
  table,
} from './harness.js'
import { eventBody } from './verify.js'

const SECRET = 'whsec_bench_handle'
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/** `count` signed 2 KiB deliveries as an adapter hands them to `handle()`, each its own payload id. */
export function signedRequests(count: number, idPrefix: string, secret: string): WebhookRequest[] {
  const requests: WebhookRequest[] = []
  for (let i = 0; i < count; i++) {
    const body = Buffer.from(eventBody(2048, `${idPrefix}${String(i).padStart(8, '0')}`))
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex').toUpperCase()}`
    requests.push({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        host: '127.0.0.1:3000',
        'content-type': 'application/json',
        'content-length': String(body.length),
        'x-service-signature': signature,
        'x-service-webhook-id': 'wh_bench',
        'user-agent': 'bench',
      },
      body,
    })
  }
  return requests
}

async function measureHandle(): Promise<Measured[]> {
  const store = new MemoryDedupeStore()
  // More distinct deliveries than the store keeps: an id comes round again only once evicted.
  const count = store.maxEntries + 10_000
  const requests = signedRequests(count, 'payload_bench', SECRET)
  const handler = createWebhookHandler({
    secret: SECRET,
    dedupe: store,
    logger: quiet,
    onAny: () => {},
  })
  let a = 0
  let b = 0
  const cases: Case[] = [
    {
      name: 'floor + JSON.parse',
      async: true,
      run: () => {
        const { body, headers } = requests[a++ % count]!
        const header = (headers as Record<string, string>)['x-service-signature']!
        const expected = createHmac('sha256', SECRET)
          .update(body as Buffer)
          .digest()
        const given = Buffer.from(header.slice(7), 'hex')
        if (given.length !== expected.length || !timingSafeEqual(expected, given))
          throw new Error('no')
        return JSON.parse((body as Buffer).toString('utf8'))
      },
    },
    {
      name: 'handle(), default in-memory dedupe, new id each time',
      async: true,
      run: async () => {
        const answer = await handler.handle(requests[b++ % count]!)
        if (answer?.status !== 200 || answer.body.includes('duplicate'))
          throw new Error('not handled')
      },
    },
  ]
  return measure(cases)
}

export async function handleBench(): Promise<Target[]> {
  // In its own process: its 80 000 bodies and full store stay out of the other sections' heap.
  const results = await measureInChild(import.meta.url, ['handle'])
  table('One 2 KiB delivery in process', results, results[0]!.name)
  return [
    {
      what: 'handle() with dedupe / floor + JSON.parse',
      ratio: ratio(results, results[1]!.name, results[0]!.name),
      limit: 1.2,
      kind: 'max',
    },
  ]
}

if (process.argv[2] === 'handle') answerParent(await measureHandle())
