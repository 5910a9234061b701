import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { ConfigError, type WebhookError } from '../../src/errors/errors.js'
import type { WebhookContext } from '../../src/webhooks/context.js'
import type { AnyWebhookEvent } from '../../src/webhooks/events.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import type { WebhookHandlerOptions } from '../../src/webhooks/options.js'
import { deliver, envelope, serveHandler, sign } from '../helpers.js'

const SECRET = 'test-secret'
let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(closers.map((close) => close()))
  closers = []
})

async function start(options: Partial<WebhookHandlerOptions> = {}) {
  const handler = createWebhookHandler({ secret: SECRET, ...options })
  const server = await serveHandler(handler)
  closers.push(server.close)
  return { handler, ...server }
}

describe('createWebhookHandler over HTTP', () => {
  it('200: verifies, parses and runs the handler with the event and the delivery context', async () => {
    const seen: Array<[AnyWebhookEvent, WebhookContext]> = []
    const { url } = await start({ on: { 'event.created': (e, ctx) => void seen.push([e, ctx]) } })
    const body = JSON.stringify(envelope('event.created', { unknown_field: 1 }))
    const res = await deliver(url, body, { webhookId: 'wh_abc' })
    expect(res.status).toBe(200)
    expect(res.json).toEqual({ received: true })
    expect(seen).toHaveLength(1)
    expect(seen[0]![0]).toEqual(JSON.parse(body))
    expect(seen[0]![1].webhookId).toBe('wh_abc')
    expect(seen[0]![1].secretIndex).toBe(0)
  })

  it('200 for an unknown event type, handed to the catch-all only', async () => {
    const any = vi.fn()
    const created = vi.fn()
    const { url } = await start({
      onAny: any,
      on: { 'event.created': created, 'event.*': created },
    })
    const res = await deliver(url, JSON.stringify(envelope('meeting.teleported')))
    expect(res.status).toBe(200)
    expect(any).toHaveBeenCalledOnce()
    expect(created).not.toHaveBeenCalled()
  })

  it('runs exact, prefix, list and catch-all handlers that match, and no others', async () => {
    const calls: string[] = []
    const { handler, url } = await start()
    handler
      .on('event.checkout.completed', () => void calls.push('exact'))
      .on('event.checkout.*', () => void calls.push('checkout.*'))
      .on('event.*', () => void calls.push('event.*'))
      .on(['event.canceled', 'event.checkout.completed'], () => void calls.push('list'))
      .on('poll.*', () => void calls.push('poll.*'))
      .onAny(() => void calls.push('any'))
    expect((await deliver(url, JSON.stringify(envelope('event.checkout.completed')))).status).toBe(
      200,
    )
    expect(calls.sort()).toEqual(['any', 'checkout.*', 'event.*', 'exact', 'list'])
    calls.length = 0
    await deliver(url, JSON.stringify(envelope('poll.response.created')))
    expect(calls.sort()).toEqual(['any', 'poll.*'])
  })

  it('200 without running handlers again for a duplicate payload id', async () => {
    const fn = vi.fn()
    const { url } = await start({ onAny: fn })
    const body = JSON.stringify(envelope())
    expect((await deliver(url, body)).json).toEqual({ received: true })
    const again = await deliver(url, body)
    expect(again.status).toBe(200)
    expect(again.json).toEqual({ received: true, duplicate: true })
    expect(fn).toHaveBeenCalledOnce()
  })

  it('a replay under another webhook id, or none, is a duplicate: the id header is not signed', async () => {
    const fn = vi.fn()
    const { url } = await start({ onAny: fn })
    const body = JSON.stringify(envelope())
    expect((await deliver(url, body, { webhookId: 'wh_1' })).json).toEqual({ received: true })
    for (const webhookId of ['wh_2', 'wh_attacker', null, '']) {
      const replay = await deliver(url, body, { webhookId })
      expect(replay.json, String(webhookId)).toEqual({ received: true, duplicate: true })
    }
    expect(fn).toHaveBeenCalledOnce()
  })

  it('dedupes per webhook id when the secret is looked up by it: one payload to two webhooks runs for each', async () => {
    const fn = vi.fn()
    const secrets: Record<string, string> = { wh_1: 'secret-one', wh_2: 'secret-two' }
    const { url } = await start({ onAny: fn, secret: (id) => (id ? secrets[id] : undefined) })
    const body = JSON.stringify(envelope())
    await deliver(url, body, { webhookId: 'wh_1', secret: 'secret-one' })
    await deliver(url, body, { webhookId: 'wh_2', secret: 'secret-two' })
    await deliver(url, body, { webhookId: 'wh_2', secret: 'secret-two' })
    expect(fn).toHaveBeenCalledTimes(2)
    // Replaying wh_1's delivery under wh_2 fails verification: wh_2 has another secret.
    const replay = await deliver(url, body, { webhookId: 'wh_2', secret: 'secret-one' })
    expect(replay.status).toBe(401)
  })

  it('401 secret_unknown when a lookup answers only white space, never using it as a key', async () => {
    const fn = vi.fn()
    for (const blank of [' ', '\n', '\t \r\n', ['  ', ''], '\u00a0']) {
      const { url } = await start({ onAny: fn, secret: () => blank })
      const body = JSON.stringify(envelope())
      const spaced = typeof blank === 'string' ? blank : blank[0]!
      const res = await deliver(url, body, { secret: spaced })
      expect(res.status, JSON.stringify(blank)).toBe(401)
      expect(res.json.error.code).toBe('secret_unknown')
    }
    expect(fn).not.toHaveBeenCalled()
  })

  it('500 when a handler throws, then the retry runs it again and succeeds: nothing is lost', async () => {
    let attempts = 0
    const errors: WebhookError[] = []
    const { url } = await start({
      on: {
        'event.created': () => {
          attempts++
          if (attempts === 1) throw new Error('database down: password=hunter2')
        },
      },
      onError: (e) => void errors.push(e),
    })
    const body = JSON.stringify(envelope())
    const first = await deliver(url, body)
    expect(first.status).toBe(500)
    expect(first.json.error.code).toBe('handler_failed')
    expect(JSON.stringify(first.json)).not.toContain('hunter2')
    expect(errors[0]?.cause).toBeInstanceOf(Error)
    expect((await deliver(url, body)).json).toEqual({ received: true })
    expect((await deliver(url, body)).json).toEqual({ received: true, duplicate: true })
    expect(attempts).toBe(2)
  })

  it('500 when an async handler rejects, even if the other handlers succeed', async () => {
    const ok = vi.fn()
    const { url } = await start({
      onAny: ok,
      on: { 'event.created': async () => Promise.reject(new Error('x')) },
    })
    expect((await deliver(url, JSON.stringify(envelope()))).status).toBe(500)
    expect(ok).toHaveBeenCalledOnce()
  })

  it('409 while the same payload is still being handled, so the retry comes back later', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const fn = vi.fn(() => gate)
    const { url } = await start({ onAny: fn })
    const body = JSON.stringify(envelope())
    const first = deliver(url, body)
    await vi.waitFor(() => expect(fn).toHaveBeenCalledOnce(), { timeout: 15_000 })
    const second = await deliver(url, body)
    expect(second.status).toBe(409)
    expect(second.json.error.code).toBe('delivery_in_progress')
    release()
    expect((await first).status).toBe(200)
    expect((await deliver(url, body)).json).toEqual({ received: true, duplicate: true })
    expect(fn).toHaveBeenCalledOnce()
  })

  it('runs handlers on every delivery when dedupe is off', async () => {
    const fn = vi.fn()
    const { url } = await start({ onAny: fn, dedupe: false })
    const body = JSON.stringify(envelope())
    await deliver(url, body)
    await deliver(url, body)
    expect(fn).toHaveBeenCalledTimes(2)
  })

  it('queue mode: 200 once enqueued, handlers left to the consumer through dispatch()', async () => {
    const queued: AnyWebhookEvent[] = []
    const handled = vi.fn()
    const { handler, url } = await start({
      on: { 'event.created': handled },
      queue: { enqueue: async (event) => void queued.push(event) },
    })
    expect((await deliver(url, JSON.stringify(envelope()))).status).toBe(200)
    expect(queued).toHaveLength(1)
    expect(handled).not.toHaveBeenCalled()
    await handler.dispatch(queued[0]!)
    expect(handled).toHaveBeenCalledOnce()
  })

  it('queue mode: the queue gets the dedupe key, under the identity of the secret that verified it (never the webhook id header) when secrets are looked up', async () => {
    const keys: string[] = []
    const queue = {
      enqueue: async (_e: unknown, _c: unknown, d: { key: string }) => void keys.push(d.key),
    }
    const fixed = await start({ queue, dedupe: false })
    const lookup = await start({ queue, dedupe: false, secret: () => SECRET })
    const body = JSON.stringify(envelope())
    const id = JSON.parse(body).id as string
    await deliver(fixed.url, body, { webhookId: 'wh_1' })
    await deliver(lookup.url, body, { webhookId: 'wh_1' })
    await deliver(lookup.url, body, { webhookId: 'WH_1 ' })
    expect(keys[0]).toBe(id)
    expect(keys[1]).toMatch(new RegExp(`^[0-9a-f]{32}:${id}$`))
    expect(keys[2]).toBe(keys[1])
    expect(keys[1]).not.toContain('wh_1')
  })

  it('503 when the queue rejects, and the retry is accepted once it recovers', async () => {
    let up = false
    const queued: AnyWebhookEvent[] = []
    const { url } = await start({
      queue: {
        enqueue: async (event) => {
          if (!up) throw new Error('queue unavailable')
          queued.push(event)
        },
      },
    })
    const body = JSON.stringify(envelope())
    const res = await deliver(url, body)
    expect(res.status).toBe(503)
    expect(res.json.error.code).toBe('queue_rejected')
    up = true
    expect((await deliver(url, body)).status).toBe(200)
    expect(queued).toHaveLength(1)
  })

  it('405 with Allow: POST for another method on the path', async () => {
    const { url } = await start()
    const res = await deliver(url, '', { method: 'GET' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect(res.json.error.code).toBe('method_not_allowed')
  })

  it('415 for a body that is not JSON', async () => {
    const { url } = await start()
    const res = await deliver(url, 'type=event.created', {
      contentType: 'application/x-www-form-urlencoded',
    })
    expect(res.status).toBe(415)
    expect((await deliver(url, '{}', { contentType: null })).status).toBe(415)
  })

  it('accepts a JSON content type with parameters', async () => {
    const { url } = await start()
    const res = await deliver(url, JSON.stringify(envelope()), {
      contentType: 'Application/JSON; charset=utf-8',
    })
    expect(res.status).toBe(200)
  })

  it('413 for a body over the limit, by Content-Length or while streaming', async () => {
    const { url } = await start({ bodyLimit: 1000 })
    const big = JSON.stringify(envelope('event.created', { pad: 'x'.repeat(2000) }))
    const res = await deliver(url, big)
    expect(res.status).toBe(413)
    expect(res.json.error.code).toBe('payload_too_large')

    const chunk = new TextEncoder().encode('x'.repeat(400))
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        if (pulled > 50) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const streamed = await fetch(`${url}/webhooks/scheduling`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': sign('x', SECRET) },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(streamed.status).toBe(413)
  })

  it('401 when the signature is missing, wrong, or made with another secret', async () => {
    const { url } = await start()
    const body = JSON.stringify(envelope())
    const missing = await deliver(url, body, { signature: null })
    expect(missing.status).toBe(401)
    expect(missing.json.error.code).toBe('signature_missing')
    expect(missing.json.error.message).toContain('x-service-signature')
    const wrong = await deliver(url, body, { secret: 'another-secret' })
    expect(wrong.status).toBe(401)
    expect(wrong.json.error.code).toBe('signature_invalid')
    const tampered = await deliver(url, body.replace('confirmed', 'canceled'), {
      signature: sign(body, SECRET),
    })
    expect(tampered.status).toBe(401)
  })

  it('401 with a hint when the configured secret has surrounding white space', async () => {
    const { url } = await start({ secret: `${SECRET}\n` })
    const res = await deliver(url, JSON.stringify(envelope()))
    expect(res.status).toBe(401)
    expect(res.json.error.code).toBe('secret_whitespace')
    expect(res.json.error.message).toMatch(/trim/i)
  })

  it('never puts the secret or the expected signature in an answer', async () => {
    const secret = 'super-secret-value-42'
    const { url } = await start({ secret: [secret, `${secret} `] })
    const body = JSON.stringify(envelope())
    const expected = sign(body, secret).slice(7)
    for (const options of [{ secret: 'wrong' }, { signature: 'sha256=00' }, { signature: null }]) {
      const res = await deliver(url, body, options)
      const text = JSON.stringify(res.json)
      expect(text).not.toContain(secret)
      expect(text.toLowerCase()).not.toContain(expected.toLowerCase())
    }
  })

  it('looks the secret up by webhook id: one endpoint, many webhooks', async () => {
    const secrets: Record<string, string> = { wh_a: 'secret-a', wh_b: 'secret-b' }
    const lookups: Array<string | undefined> = []
    const seen: Array<string | undefined> = []
    const { url } = await start({
      secret: async (id) => {
        lookups.push(id)
        return id === undefined ? undefined : secrets[id]
      },
      onAny: (_e, ctx) => void seen.push(ctx.webhookId),
    })
    const body = () => JSON.stringify(envelope())
    expect((await deliver(url, body(), { webhookId: 'wh_a', secret: 'secret-a' })).status).toBe(200)
    expect((await deliver(url, body(), { webhookId: 'wh_b', secret: 'secret-b' })).status).toBe(200)
    expect((await deliver(url, body(), { webhookId: 'wh_b', secret: 'secret-a' })).status).toBe(401)
    const unknown = await deliver(url, body(), { webhookId: 'wh_zzz', secret: 'secret-a' })
    expect(unknown.status).toBe(401)
    expect(unknown.json.error.code).toBe('secret_unknown')
    expect(unknown.json.error.message).toContain('wh_zzz')
    const noId = await deliver(url, body(), { webhookId: null })
    expect(noId.json.error.code).toBe('secret_unknown')
    expect(seen).toEqual(['wh_a', 'wh_b'])
    expect(lookups).toEqual(['wh_a', 'wh_b', 'wh_b', 'wh_zzz', undefined])
  })

  it('a delivery without the webhook-id header (an older sample): the lookup, asked with undefined, answers the secrets still worth trying, and the one that signed it verifies; with subscriptions it is refused, saying why', async () => {
    const seen: Array<string | undefined> = []
    const { url } = await start({
      secret: (id) => (id === undefined ? ['secret-a', 'secret-b'] : undefined),
      onAny: (_e, ctx) => void seen.push(`${ctx.webhookId} ${ctx.secretIndex}`),
    })
    const body = () => JSON.stringify(envelope())
    const b = await deliver(url, body(), { webhookId: null, secret: 'secret-b' })
    expect(b.status).toBe(200)
    const forged = await deliver(url, body(), { webhookId: null, secret: 'secret-c' })
    expect(forged.status).toBe(401)
    expect(seen).toEqual(['undefined 1'])
    const subscribed = await start({
      secret: undefined,
      subscriptions: { lookup: async () => undefined } as never,
      onAny: () => {},
    })
    const refused = await deliver(subscribed.url, body(), { webhookId: null })
    expect(refused.status).toBe(401)
    expect(refused.json.error.code).toBe('secret_unknown')
    expect(refused.json.error.message).toMatch(/has no x-service-webhook-id header/)
  })

  it('500, not 401, when the secret lookup itself fails, so the delivery is retried', async () => {
    const { url } = await start({
      secret: () => {
        throw new Error('vault unreachable')
      },
    })
    const res = await deliver(url, JSON.stringify(envelope()))
    expect(res.status).toBe(500)
    expect(JSON.stringify(res.json)).not.toContain('vault')
  })

  it('rotation: either secret verifies, and the context tells which one', async () => {
    const indexes: number[] = []
    const { url } = await start({
      secret: ['new', 'old'],
      onAny: (_e, ctx) => void indexes.push(ctx.secretIndex),
    })
    await deliver(url, JSON.stringify(envelope()), { secret: 'old' })
    await deliver(url, JSON.stringify(envelope()), { secret: 'new' })
    expect(indexes).toEqual([1, 0])
  })

  it('a retry of one delivery signed with the other secret of a rotating webhook (a lookup answering [new, old]) runs its handlers once', async () => {
    let runs = 0
    const { url } = await start({
      secret: (id) => (id === 'wh_rotating' ? ['s_new', 's_old'] : undefined),
      onAny: () => void runs++,
    })
    const body = JSON.stringify(envelope())
    const webhookId = 'wh_rotating'
    expect((await deliver(url, body, { secret: 's_old', webhookId })).status).toBe(200)
    expect((await deliver(url, body, { secret: 's_new', webhookId })).status).toBe(200)
    expect(runs).toBe(1)
  })

  it("a verified body of the vendor's other product: 200 so it is not retried, named in the answer and told to onError, no handler run", async () => {
    const errors: string[] = []
    const fn = vi.fn()
    const { url } = await start({ onAny: fn })
    const other = JSON.stringify({
      id: 'evt_123',
      account_id: 'acct_1',
      version: '1.0',
      created_at: '2026-12-01T10:00:00Z',
      data: { type: 'appointment.created', object: { id: 'appt_1' } },
    })
    const handler = createWebhookHandler({
      secret: 'test-secret',
      onAny: fn,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    }).onError((error) => void errors.push(error.code))
    const served = await serveHandler(handler)
    const answer = await deliver(served.url, other)
    expect(answer.status).toBe(200)
    expect(answer.json.error.code).toBe('other_product')
    expect(answer.json.error.message).toContain('"appointment.created"')
    expect(errors).toEqual(['other_product'])
    expect(fn).not.toHaveBeenCalled()
    expect((await deliver(url, other)).status).toBe(200)
    await served.close()
  })

  it('400 for a signed body that is not JSON or not an envelope', async () => {
    const { url } = await start()
    const notJson = await deliver(url, 'not json')
    expect(notJson.status).toBe(400)
    expect(notJson.json.error.code).toBe('invalid_json')
    const noId = await deliver(url, '{"type":"event.created"}')
    expect(noId.status).toBe(400)
    expect(noId.json.error.code).toBe('invalid_id')
  })

  it('leaves every other path and method to the app, and honours path, query and trailing slash', async () => {
    const fn = vi.fn()
    const { url, appHits } = await start({ path: '/hooks/in', onAny: fn })
    expect((await deliver(url, '{}', { path: '/webhooks/scheduling' })).status).toBe(404)
    expect((await deliver(url, '', { method: 'GET', path: '/' })).json).toBe('app route')
    expect(appHits()).toBe(2)
    expect((await deliver(url, JSON.stringify(envelope()), { path: '/hooks/in?x=1' })).status).toBe(
      200,
    )
    expect((await deliver(url, JSON.stringify(envelope()), { path: '/hooks/in/' })).status).toBe(
      200,
    )
    expect(fn).toHaveBeenCalledTimes(2)
  })

  it('reports every error answer to onError with the webhook id, and a failing listener changes nothing', async () => {
    const seen: Array<[string, string | undefined, string | undefined]> = []
    const { handler, url } = await start({
      on: {
        'event.created': () => {
          throw new Error('boom')
        },
      },
    })
    handler.onError(() => {
      throw new Error('listener bug')
    })
    handler.onError((e, ctx) => void seen.push([e.code, ctx.webhookId, ctx.event?.type]))
    await deliver(url, JSON.stringify(envelope()), { webhookId: 'wh_9' })
    await deliver(url, '{}', { signature: null })
    expect(seen).toEqual([
      ['handler_failed', 'wh_9', 'event.created'],
      ['signature_missing', undefined, undefined],
    ])
  })

  it('a store blip at the release does not leave the claim in progress: the retry runs the handler', async () => {
    const store = new MemoryDedupeStore()
    let refuse = 2
    const flaky = {
      claim: (key: string, owner: string) => store.claim(key, owner),
      complete: (key: string, owner: string) => store.complete(key, owner),
      release: async (key: string, owner: string) => {
        if (refuse-- > 0) throw new Error('connection lost')
        return store.release(key, owner)
      },
    }
    let calls = 0
    const { url } = await start({
      dedupe: flaky,
      onAny: () => {
        calls++
        if (calls === 1) throw new Error('the handler failed once')
      },
    })
    const body = JSON.stringify(envelope())
    expect((await deliver(url, body)).status).toBe(500)
    const retry = await deliver(url, body)
    expect(retry.status).toBe(200)
    expect(calls).toBe(2)
  })

  it('the claim is renewed while a handler runs, with a store that can extend it', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      const store = new MemoryDedupeStore()
      const extended: string[] = []
      let finish: () => void = () => {}
      let started: () => void = () => {}
      const running = new Promise<void>((resolve) => (started = resolve))
      const { url } = await start({
        dedupe: {
          claim: (key, owner) => store.claim(key, owner),
          complete: (key, owner) => store.complete(key, owner),
          release: (key, owner) => store.release(key, owner),
          extend: (key) => {
            extended.push(key)
            return true
          },
        },
        onAny: () =>
          new Promise<void>((resolve) => {
            finish = resolve
            started()
          }),
      })
      const body = JSON.stringify(envelope())
      const answer = deliver(url, body)
      await running // the handler runs: its claim is held
      vi.advanceTimersByTime(35_000)
      finish()
      expect((await answer).status).toBe(200)
      expect(extended).toEqual(Array(3).fill(JSON.parse(body).id))
      vi.advanceTimersByTime(35_000) // stopped with the handler
      expect(extended).toHaveLength(3)
    } finally {
      vi.useRealTimers()
    }
  })

  it('uses a shared dedupe store the app provides', async () => {
    const store = new MemoryDedupeStore()
    const fn = vi.fn()
    const a = await start({ onAny: fn, dedupe: store })
    const b = await start({ onAny: fn, dedupe: store })
    const body = JSON.stringify(envelope())
    await deliver(a.url, body)
    expect((await deliver(b.url, body)).json.duplicate).toBe(true)
    expect(fn).toHaveBeenCalledOnce()
  })

  it('a delivery whose claim lapsed and was taken over cannot free the new claim when it fails', async () => {
    let now = 0
    const store = new MemoryDedupeStore({ leaseMs: 1_000, now: () => now })
    const gates: Array<{ resolve: () => void; reject: (e: Error) => void }> = []
    const { url } = await start({
      dedupe: store,
      onAny: () =>
        new Promise<void>((resolve, reject) => {
          gates.push({ resolve, reject })
        }),
    })
    const body = JSON.stringify(envelope())
    const slow = deliver(url, body)
    await vi.waitFor(() => expect(gates).toHaveLength(1), { timeout: 15_000 })
    now = 1_500 // the slow delivery's claim lapsed: the service's retry takes the key over
    const retry = deliver(url, body)
    await vi.waitFor(() => expect(gates).toHaveLength(2), { timeout: 15_000 })
    gates[0]!.reject(new Error('the slow one failed'))
    expect((await slow).status).toBe(500)
    // Its release must leave the retry's claim alone: a third delivery still sees it in progress.
    expect((await deliver(url, body)).status).toBe(409)
    gates[1]!.resolve()
    expect((await retry).status).toBe(200)
    expect((await deliver(url, body)).json.duplicate).toBe(true)
    expect(gates).toHaveLength(2)
  })
})

describe('createWebhookHandler without HTTP', () => {
  it('answers body_parsed with the fix the adapter gives when a body parser got there first', async () => {
    const handler = createWebhookHandler(SECRET)
    const body = envelope()
    // Signed over bytes that are not the value's compact serialization: the fallback cannot apply.
    const res = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': sign(JSON.stringify(body, null, 2), SECRET),
      },
      body,
      fix: 'Mount the webhooks middleware before express.json().',
    })
    expect(res?.status).toBe(500)
    const { error } = JSON.parse(res!.body)
    expect(error.code).toBe('body_parsed')
    expect(error.message).toMatch(
      /gone\. Mount the webhooks middleware before express\.json\(\)\.$/,
    )
    // Without one, the fix core gives any caller.
    const plain = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: { 'content-type': 'application/json', 'x-service-signature': 'sha256=00' },
      body,
    })
    expect(JSON.parse(plain!.body).error.message).toContain('pass it the raw body as a string')
  })

  it('serves Fetch requests, 404 off its path', async () => {
    const fn = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onAny: fn })
    const body = JSON.stringify(envelope())
    const res = await handler.fetch(
      new Request('http://x.test/webhooks/scheduling', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
        body,
      }),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ received: true })
    expect(fn).toHaveBeenCalledOnce()
    expect((await handler.fetch(new Request('http://x.test/other'))).status).toBe(404)
  })

  it('refuses options that cannot work, with the fix in the message', () => {
    expect(() => createWebhookHandler(undefined as unknown as string)).toThrow(ConfigError)
    expect(() => createWebhookHandler({ secret: process.env.NOT_SET as string })).toThrow(
      /SCHEDULING_SECRET/,
    )
    expect(() => createWebhookHandler({ secret: [] })).toThrow(ConfigError)
    expect(() => createWebhookHandler({ secret: '  ' })).toThrow(ConfigError)
    expect(() => createWebhookHandler({ secret: 's', path: 'hooks' })).toThrow(/start with/)
    expect(() => createWebhookHandler({ secret: 's', bodyLimit: -1 })).toThrow(/bodyLimit/)
    expect(() => createWebhookHandler({ secret: 's', queue: {} as never })).toThrow(/enqueue/)
    expect(() => createWebhookHandler('s').on('' as never, () => {})).toThrow(ConfigError)
  })
})

describe('createWebhookHandler: dedupe window, body deadline, bytes as received', () => {
  it('tells onError, at most once a minute, when the in-memory dedupe store forgets ids early', async () => {
    const errors: WebhookError[] = []
    const handler = createWebhookHandler({
      secret: SECRET,
      dedupe: new MemoryDedupeStore({ maxEntries: 2 }),
      onError: (e) => void errors.push(e),
    })
    for (let i = 0; i < 10; i++) {
      const body = JSON.stringify(envelope())
      const answer = await handler.handle({
        method: 'POST',
        path: '/webhooks/scheduling',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
        body,
      })
      expect(answer?.status).toBe(200)
    }
    expect(errors.map((e) => e.code)).toEqual(['dedupe_evicted'])
    expect(errors[0]!.message).toMatch(/shared dedupe store/)
  })

  it('408 body_timeout on the Fetch path when a Web stream stalls; the stream is cancelled', async () => {
    const handler = createWebhookHandler({ secret: SECRET, bodyTimeoutMs: 100 })
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"type":'))
      },
      cancel() {
        cancelled = true
      },
    })
    const response = await handler.fetch(
      new Request('http://app.test/webhooks/scheduling', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign('x', SECRET) },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    )
    expect(response.status).toBe(408)
    expect(response.headers.get('connection')).toBe('close')
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('body_timeout')
    expect(cancelled).toBe(true)
  })

  it('500 body_parsed when text a parser kept is not the length the request declared', async () => {
    const handler = createWebhookHandler(SECRET)
    const text = JSON.stringify(envelope())
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text) + 3),
        'x-service-signature': sign(text, SECRET),
      },
      body: text,
    })
    expect(answer?.status).toBe(500)
    expect(JSON.parse(answer!.body).error.code).toBe('body_parsed')
  })

  it('refuses a bodyTimeoutMs that is not a positive whole number', () => {
    for (const bodyTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => createWebhookHandler({ secret: SECRET, bodyTimeoutMs })).toThrow(ConfigError)
    }
  })
})

describe('handle()', () => {
  it('a request that is no request rejects (it never throws where it is called)', async () => {
    const handler = createWebhookHandler('whsec_no_request')
    let thrown = false
    let promise: Promise<unknown> | undefined
    try {
      promise = handler.handle(null as never)
    } catch {
      thrown = true
    }
    expect(thrown).toBe(false)
    await expect(promise).rejects.toThrow(TypeError)
  })
})
