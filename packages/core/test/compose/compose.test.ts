import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { idsOf, installSdk } from '../../../../internal/conformance/src/otel.js'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { checkAccountSignature } from '../../src/compose/accounts.js'
import { refuseOlderThan } from '../../src/compose/age.js'
import { readBody } from '../../src/compose/body.js'
import { dedupe } from '../../src/compose/dedupe.js'
import { parseEvent } from '../../src/compose/event.js'
import { readFetchBody } from '../../src/compose/fetch-body.js'
import { handlers } from '../../src/compose/handlers.js'
import { logErrors } from '../../src/compose/log.js'
import { checkSignatureByLookup } from '../../src/compose/lookup.js'
import { acceptParsedBody } from '../../src/compose/parsed-body.js'
import { composeWebhooks, type WebhookPart } from '../../src/compose/path.js'
import { enqueueTo } from '../../src/compose/queue.js'
import { recordIn } from '../../src/compose/record.js'
import { checkSignature } from '../../src/compose/signature.js'
import { traced } from '../../src/compose/telemetry.js'
import { ConfigError } from '../../src/errors/errors.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import type { WebhookContext } from '../../src/webhooks/context.js'
import type { AnyWebhookEvent } from '../../src/webhooks/events.js'
import type { SubscriptionLookup } from '../../src/webhooks/options.js'
import { useOpenTelemetry } from '../../src/webhooks/telemetry/use.js'
import { deliver, envelope, serveFetch, serveHandler, sign } from '../helpers.js'

const SECRET = 'compose-secret-0123456789'
let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((close) => close()))
  closers = []
})

type Seen = Array<[AnyWebhookEvent, WebhookContext]>

/** A composed path served through its Fetch face, the way a Fetch runtime calls it. */
async function fetchPath(parts: WebhookPart[], options: { onError?: () => void } = {}) {
  const path = composeWebhooks({ parts, ...options })
  const server = await serveFetch(path.fetch)
  closers.push(server.close)
  return server.url
}

/** A composed path served to Node requests, the way a Node adapter calls `handle`. */
async function nodePath(parts: WebhookPart[]) {
  const server = await serveHandler(composeWebhooks({ parts }))
  closers.push(server.close)
  return server.url
}

const recording = (seen: Seen) =>
  handlers({ '*': (event, context) => void seen.push([event, context]) })

describe('a composed webhook path over a Fetch face', () => {
  it('reads, verifies, parses and runs the handlers, with the context the preset gives', async () => {
    const seen: Seen = []
    const url = await fetchPath([
      readFetchBody(),
      checkSignature(['old-secret', SECRET]),
      parseEvent(),
      recording(seen),
    ])
    const body = JSON.stringify(envelope('event.created'))
    const res = await deliver(url, body, { secret: SECRET, webhookId: 'wh_abc' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ received: true })
    expect(seen).toHaveLength(1)
    expect(seen[0]![0]).toEqual(JSON.parse(body))
    expect(seen[0]![1]).toMatchObject({ webhookId: 'wh_abc', secretIndex: 1 })
  })

  it('answers each refusal with the status the service needs, and runs nothing', async () => {
    const seen: Seen = []
    const url = await fetchPath([
      readFetchBody({ bodyLimit: 512 }),
      checkSignature(SECRET),
      parseEvent(),
      recording(seen),
    ])
    const body = JSON.stringify(envelope())
    const forged = await deliver(url, body, { secret: 'another-secret' })
    expect([forged.status, forged.json.error.code]).toEqual([401, 'signature_invalid'])
    const unsigned = await deliver(url, body, { signature: null })
    expect([unsigned.status, unsigned.json.error.code]).toEqual([401, 'signature_missing'])
    const get = await deliver(url, body, { method: 'GET' })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    const text = await deliver(url, body, { secret: SECRET, contentType: 'text/plain' })
    expect(text.status).toBe(415)
    const big = JSON.stringify(envelope('event.created', { pad: 'x'.repeat(600) }))
    const large = await deliver(url, big, { secret: SECRET })
    expect([large.status, large.json.error.code]).toEqual([413, 'payload_too_large'])
    const notJson = await deliver(url, 'not json', { secret: SECRET })
    expect([notJson.status, notJson.json.error.code]).toEqual([400, 'invalid_json'])
    const elsewhere = await deliver(url, body, { secret: SECRET, path: '/other' })
    expect(elsewhere.status).toBe(404)
    // Nothing answered carries the secret or the expected signature.
    expect(JSON.stringify(forged.json)).not.toContain(SECRET)
    expect(JSON.stringify(forged.json)).not.toContain(sign(body, SECRET).slice(7))
    expect(seen).toHaveLength(0)
  })

  it('never runs a handler for a body whose signature does not verify, whatever the order of the parts', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Any order of the three, and orders that leave some out (no signature part at all).
        fc.shuffledSubarray([0, 1, 2]),
        fc.oneof(fc.string({ maxLength: 40 }), fc.constant(JSON.stringify(envelope()))),
        fc.boolean(),
        async (order, body, signed) => {
          const seen: Seen = []
          const parts = [readFetchBody(), checkSignature(SECRET), parseEvent()]
          const path = composeWebhooks({
            parts: [...order.map((i) => parts[i]!), recording(seen)],
          })
          const headers: Record<string, string> = { 'content-type': 'application/json' }
          headers['x-service-signature'] = signed ? sign(body, SECRET) : sign(body, 'forged')
          const res = await path.fetch(
            new Request('http://h/webhooks/scheduling', { method: 'POST', headers, body }),
          )
          const at = (i: number) => order.indexOf(i)
          const verifiedFirst = at(1) >= 0 && at(1) < at(2)
          const readFirst = at(0) >= 0 && at(0) < at(1)
          if (seen.length > 0) {
            // Only ever a body that verified, read and verified before it was parsed.
            expect(signed && verifiedFirst && readFirst).toBe(true)
            expect(res.status).toBe(200)
          } else expect(res.status).not.toBe(200)
        },
      ),
      { numRuns: 100 },
    )
  })

  it('refuses old bodies by the signed occurred_at, on the clock it is given', async () => {
    let now = Date.parse('2030-05-01T00:00:00Z')
    const seen: Seen = []
    const url = await fetchPath([
      readFetchBody(),
      checkSignature(SECRET),
      parseEvent(),
      refuseOlderThan(86_400_000, () => now),
      recording(seen),
    ])
    const body = JSON.stringify(envelope('event.created', { occurred_at: '2030-04-30T12:00:00Z' }))
    expect((await deliver(url, body, { secret: SECRET })).status).toBe(200)
    now += 86_400_000
    const old = await deliver(url, body, { secret: SECRET })
    expect([old.status, old.json.error.code]).toEqual([200, 'too_old'])
    expect(seen).toHaveLength(1)
  })
})

describe('a composed webhook path with a record', () => {
  it('runs a delivery once: a retry is a duplicate, one still running 409, one that failed runs again', async () => {
    let runs = 0
    let release!: () => void
    let failNext = false
    const url = await nodePath([
      readBody(),
      checkSignature(SECRET),
      parseEvent(),
      dedupe(new MemoryDedupeStore()),
      handlers({
        'event.created': async () => {
          runs++
          if (failNext) {
            failNext = false
            throw new Error('boom')
          }
          await new Promise<void>((resolve) => {
            release = resolve
          })
        },
      }),
    ])
    const body = JSON.stringify(envelope())
    const first = deliver(url, body, { secret: SECRET })
    while (runs === 0) await new Promise((resolve) => setImmediate(resolve))
    const during = await deliver(url, body, { secret: SECRET })
    expect([during.status, during.json.error.code]).toEqual([409, 'delivery_in_progress'])
    release()
    expect((await first).status).toBe(200)
    const retry = await deliver(url, body, { secret: SECRET })
    expect(retry.json).toEqual({ received: true, duplicate: true })
    expect(runs).toBe(1)
    failNext = true
    const other = JSON.stringify(envelope())
    const failed = await deliver(url, other, { secret: SECRET })
    expect([failed.status, failed.json.error.code]).toEqual([500, 'handler_failed'])
    const again = deliver(url, other, { secret: SECRET })
    while (runs < 3) await new Promise((resolve) => setImmediate(resolve))
    release()
    expect((await again).status).toBe(200)
  })

  it('records each delivery in the ledger, the same record as the preset', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const seen: Seen = []
    const url = await nodePath([
      readBody(),
      checkSignature(SECRET),
      parseEvent(),
      recordIn(ledger),
      recording(seen),
    ])
    const event = envelope()
    const body = JSON.stringify(event)
    expect((await deliver(url, body, { secret: SECRET })).json).toEqual({ received: true })
    expect((await deliver(url, body, { secret: SECRET })).json).toEqual({
      received: true,
      duplicate: true,
    })
    expect(seen).toHaveLength(1)
    expect((await ledger.get(event.id))?.status).toBe('done')
  })

  it('hands deliveries to a queue once; a queue that refuses is 503 and the retry goes in', async () => {
    const queued: string[] = []
    let refuse = true
    const url = await nodePath([
      readBody(),
      checkSignature(SECRET),
      parseEvent(),
      dedupe(new MemoryDedupeStore()),
      enqueueTo({
        enqueue: (event, _context, options) => {
          if (refuse) {
            refuse = false
            throw new Error('queue down')
          }
          queued.push(`${event.id} ${options?.key}`)
        },
      }),
    ])
    const event = envelope()
    const body = JSON.stringify(event)
    const down = await deliver(url, body, { secret: SECRET })
    expect([down.status, down.json.error.code]).toEqual([503, 'queue_rejected'])
    expect((await deliver(url, body, { secret: SECRET })).json).toEqual({ received: true })
    expect((await deliver(url, body, { secret: SECRET })).json.duplicate).toBe(true)
    expect(queued).toEqual([`${event.id} ${event.id}`])
  })
})

describe('a composed webhook path: secrets, accounts, parsed bodies', () => {
  it('looks a secret up by webhook id; the same payload id of two webhooks is two deliveries', async () => {
    const secrets: Record<string, string> = { wh_a: 'secret-of-a-0123', wh_b: 'secret-of-b-0123' }
    const seen: Seen = []
    const url = await nodePath([
      readBody(),
      checkSignatureByLookup((id) => (id === undefined ? undefined : secrets[id])),
      parseEvent(),
      dedupe(),
      recording(seen),
    ])
    const body = JSON.stringify(envelope())
    for (const webhookId of ['wh_a', 'wh_b', 'wh_a'])
      expect((await deliver(url, body, { webhookId, secret: secrets[webhookId] })).status).toBe(200)
    expect(seen.map(([, context]) => context.webhookId)).toEqual(['wh_a', 'wh_b'])
    const unknown = await deliver(url, body, { webhookId: 'wh_c', secret: 'secret-of-a-0123' })
    expect([unknown.status, unknown.json.error.code]).toEqual([401, 'secret_unknown'])
  })

  it("verifies with the account's webhook secret, tells context.account, answers a removed one 200", async () => {
    const owners = new Map([
      ['wh_1', { account: 'acct_1', secret: 'secret-one-0123', handle: true }],
      ['wh_2', { account: 'acct_2', secret: 'secret-two-0123', handle: false }],
    ])
    const lookup = { lookup: (id: string) => owners.get(id) } as unknown as SubscriptionLookup
    const seen: Seen = []
    const url = await nodePath([
      readBody(),
      checkAccountSignature(lookup),
      parseEvent(),
      dedupe(),
      recording(seen),
    ])
    const body = JSON.stringify(envelope())
    const one = await deliver(url, body, { webhookId: 'wh_1', secret: 'secret-one-0123' })
    expect(one.status).toBe(200)
    // Another account's secret on this account's webhook: refused.
    const crossed = await deliver(url, body, { webhookId: 'wh_1', secret: 'secret-two-0123' })
    expect(crossed.status).toBe(401)
    const removedOne = await deliver(url, body, { webhookId: 'wh_2', secret: 'secret-two-0123' })
    expect(removedOne.json).toEqual({ received: true, removed: true })
    expect(seen.map(([, context]) => context.account)).toEqual(['acct_1'])
  })

  it("verifies what an app's JSON parser left only with acceptParsedBody, a mismatch told as parsed", async () => {
    const seen: Seen = []
    const parsedFirst = (parts: WebhookPart[]) =>
      composeWebhooks({ parts: [...parts, checkSignature(SECRET), parseEvent(), recording(seen)] })
    const event = envelope()
    const body = JSON.stringify(event)
    const request = (value: object) => ({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-service-signature': sign(body, SECRET),
      },
      body: value,
    })
    const without = await parsedFirst([readBody()]).handle(request(JSON.parse(body)))
    expect([without?.status, without?.error?.code]).toEqual([500, 'body_parsed'])
    const accepted = parsedFirst([acceptParsedBody(), readBody()])
    expect((await accepted.handle(request(JSON.parse(body))))?.status).toBe(200)
    const changed = await accepted.handle(request({ ...event, type: 'event.canceled' }))
    expect([changed?.status, changed?.error?.code]).toEqual([500, 'body_parsed'])
    expect(seen).toHaveLength(1)
  })
})

describe('composeWebhooks itself', () => {
  it('refuses parts that are not parts, and a path that does not start with /', () => {
    expect(() => composeWebhooks({ parts: [] })).toThrow(ConfigError)
    expect(() => composeWebhooks({ parts: ['readBody' as never] })).toThrow(ConfigError)
    expect(() => composeWebhooks({ parts: [parseEvent()], path: 'hooks' })).toThrow(ConfigError)
    expect(() => composeWebhooks(undefined as never)).toThrow(ConfigError)
    expect(() => checkSignature(undefined as never)).toThrow(/environment variable/)
    expect(() => checkSignature((() => 's') as never)).toThrow(/checkSignatureByLookup/)
    expect(() => refuseOlderThan(undefined as never)).toThrow(/maxAgeMs/)
    expect(() => readBody({ bodyLimit: -1 })).toThrow(/bodyLimit/)
  })

  it('answers 500 (the misuse as its cause, for the log) when the last part calls next, or a part runs before what it needs', async () => {
    const open: WebhookPart = (_delivery, next) => next()
    const noEnd = composeWebhooks({ parts: [readBody(), open] })
    const body = JSON.stringify(envelope())
    const post = {
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: { 'content-type': 'application/json' },
      body,
    }
    const ended = await noEnd.handle(post)
    expect([ended?.status, ended?.error?.code]).toEqual([500, 'handler_failed'])
    // The sender is told nothing of the app's set-up; the cause names the fix.
    expect(ended?.body).not.toMatch(/enqueueTo/)
    expect(ended?.error?.cause).toBeInstanceOf(ConfigError)
    expect((ended!.error!.cause as Error).message).toMatch(/handlers\(\) or enqueueTo\(\)/)
    const early = await composeWebhooks({ parts: [checkSignature(SECRET), parseEvent()] }).handle(
      post,
    )
    expect((early!.error!.cause as Error).message).toMatch(/checkSignature runs after readBody/)
  })

  it('tells onError and the log of each error answer; a failing listener changes nothing', async () => {
    const told: string[] = []
    const lines: string[] = []
    const logger = {
      debug: (line: string) => void lines.push(line),
      info: (line: string) => void lines.push(line),
      warn: (line: string) => void lines.push(line),
      error: (line: string) => void lines.push(line),
    }
    const path = composeWebhooks({
      parts: [logErrors(logger), readBody(), checkSignature(SECRET), parseEvent(), handlers({})],
      onError: (error) => {
        told.push(error.code)
        throw new Error('listener broke')
      },
    })
    const server = await serveHandler(path)
    closers.push(server.close)
    const body = JSON.stringify(envelope())
    const res = await deliver(server.url, body, { secret: 'wrong-secret', webhookId: 'wh_log' })
    expect(res.status).toBe(401)
    expect(told).toEqual(['signature_invalid'])
    expect(lines.join('\n')).toContain('401 signature_invalid (webhook wh_log)')
    expect(lines.join('\n')).not.toContain(SECRET)
  })

  it('with traced() first, is one delivery span with the claim and the handlers under it', async () => {
    const sdk = installSdk(useOpenTelemetry)
    try {
      const url = await nodePath([
        traced(),
        readBody(),
        checkSignature(SECRET),
        parseEvent(),
        dedupe(),
        handlers({ 'event.created': () => {}, 'event.*': async () => {} }),
      ])
      const event = envelope()
      expect((await deliver(url, JSON.stringify(event), { secret: SECRET })).status).toBe(200)
      const [delivery] = sdk.named('scheduling.webhook.delivery')
      expect(delivery!.attributes).toMatchObject({
        'http.response.status_code': 200,
        'scheduling.payload.id': event.id,
        'scheduling.webhook.outcome': 'received',
      })
      const { spanId } = idsOf(delivery!)
      const children = sdk.spans().filter((span) => idsOf(span).parent === spanId)
      expect(children.map((span) => span.name).sort()).toEqual([
        'scheduling.webhook.dedupe.claim',
        'scheduling.webhook.handler',
        'scheduling.webhook.handler',
      ])
    } finally {
      await sdk.shutdown()
    }
  })
})
