import { describe, expect, it } from 'vitest'
import { COOKIE_SECRET, SECRET, type SuiteContext } from './context.js'
import type { AdapterHarness } from './harness.js'
import { FAIL_WRITE_HEADER } from './harness.js'
import { type Answer, cookieHeader, deliver, envelope, request } from './http.js'

// The webhook endpoint through the adapter: the status-code table, the app around it, the log.

/** The webhook endpoint: every status, the app around it, the log. */
export function defineWebhookCases(harness: AdapterHarness, ctx: SuiteContext): void {
  webhookSuccessAnswers(harness, ctx)
  webhookRefusals(harness, ctx)
  webhookSecrets(harness, ctx)
  webhookRoutingAndQueue(harness, ctx)
  appAroundCases(harness, ctx)
  logCases(harness, ctx)
}

function webhookSuccessAnswers(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: webhooks`, () => {
    it('200: verifies the raw bytes and hands the typed event and the webhook id to handlers', async () => {
      const app = await start()
      const body = envelope('event.created')
      const res = await deliver(app.hook, body, { webhookId: 'wh_42' })
      expect(res.status).toBe(200)
      expect(res.json).toEqual({ received: true })
      expect(app.events).toEqual([JSON.parse(body)])
      expect(app.contexts).toEqual(['wh_42'])
    })

    it('200 for an unknown event type, handed to the catch-all', async () => {
      const app = await start()
      expect((await deliver(app.hook, envelope('meeting.teleported'))).status).toBe(200)
      expect(app.events.map((e) => e.type)).toEqual(['meeting.teleported'])
    })

    it('200 without running handlers again for a duplicate payload id', async () => {
      const app = await start()
      const body = envelope()
      await deliver(app.hook, body)
      const again = await deliver(app.hook, body)
      expect(again.status).toBe(200)
      expect(again.json.duplicate).toBe(true)
      expect(app.events).toHaveLength(1)
    })

    it('500 when a handler throws, and the retry delivers it exactly once', async () => {
      let failures = 1
      const handled: string[] = []
      const app = await start({
        webhooks: {
          on: {
            'event.canceled': (event) => {
              if (failures-- > 0) throw new Error('database unavailable')
              handled.push(event.id)
            },
          },
        },
      })
      const body = envelope('event.canceled')
      const first = await deliver(app.hook, body)
      expect(first.status).toBe(500)
      expect(first.text).not.toContain('database unavailable')
      expect((await deliver(app.hook, body)).status).toBe(200)
      expect((await deliver(app.hook, body)).json.duplicate).toBe(true)
      expect(handled).toEqual([JSON.parse(body).id])
    })
  })
}

function webhookRefusals(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: webhooks`, () => {
    it('405 with Allow: POST for another method on the webhook path', async () => {
      const app = await start()
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await deliver(app.hook, '{}', { method })
        expect(res.status, method).toBe(405)
        expect(res.headers.get('allow')).toBe('POST')
        expect(res.json.error?.code).toBe('method_not_allowed')
      }
    })

    it('415 for a body that is not JSON', async () => {
      const app = await start()
      const res = await deliver(app.hook, 'type=event.created', { contentType: 'text/plain' })
      expect(res.status).toBe(415)
      expect(res.json.error?.code).toBe('unsupported_media_type')
    })

    it('413 for a body over the limit, declared or streamed, with the JSON error body', async () => {
      const app = await start({ webhooks: { bodyLimit: 2048 } })
      const res = await deliver(app.hook, envelope('event.created', { pad: 'x'.repeat(8192) }))
      expect(res.status).toBe(413)
      expect(res.json.error?.code).toBe('payload_too_large')
      // No Content-Length: the limit must hold while reading. Valid JSON, so that an app parser
      // placed before the middleware lets it through.
      const encoder = new TextEncoder()
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          sent++
          if (sent === 1) controller.enqueue(encoder.encode('{"pad":"'))
          else if (sent < 40) controller.enqueue(encoder.encode('x'.repeat(1000)))
          else {
            controller.enqueue(encoder.encode('"}'))
            controller.close()
          }
        },
      })
      const streamed = await fetch(app.hook, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': `sha256=${'0'.repeat(64)}`,
        },
        body: stream,
        duplex: 'half',
      } as RequestInit)
      expect(streamed.status).toBe(413)
      expect(((await streamed.json()) as { error: { code: string } }).error.code).toBe(
        'payload_too_large',
      )
      expect(app.events).toHaveLength(0)
      expect(app.errors).toContain('payload_too_large')
    })

    it('401 for a missing or wrong signature, and the secret is never in the answer', async () => {
      const app = await start()
      const body = envelope()
      const missing = await deliver(app.hook, body, { signature: null })
      expect(missing.status).toBe(401)
      expect(missing.json.error?.code).toBe('signature_missing')
      const wrong = await deliver(app.hook, body, { secret: 'not-the-secret' })
      expect(wrong.status).toBe(401)
      expect(wrong.json.error?.code).toBe('signature_invalid')
      expect(wrong.text).not.toContain(SECRET)
      expect(app.events).toHaveLength(0)
    })

    it('400 for a signed body that is not an envelope', async () => {
      const app = await start()
      const res = await deliver(app.hook, '{"type":"event.created"}')
      expect(res.status).toBe(400)
      expect(res.json.error?.code).toBe('invalid_id')
    })
  })
}

function webhookSecrets(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: webhooks`, () => {
    it('accepts a lower-case signature without the prefix', async () => {
      const app = await start()
      const body = envelope()
      const { signPayload } = await import('@scheduling-kit/core')
      const header = (await signPayload(body, SECRET)).slice(7).toLowerCase()
      expect((await deliver(app.hook, body, { signature: header })).status).toBe(200)
    })

    it('looks the secret up by webhook id', async () => {
      const secrets: Record<string, string> = { wh_a: 'secret-a', wh_b: 'secret-b' }
      const app = await start({ webhooks: { secret: (id) => (id ? secrets[id] : undefined) } })
      expect(
        (await deliver(app.hook, envelope(), { webhookId: 'wh_a', secret: 'secret-a' })).status,
      ).toBe(200)
      expect(
        (await deliver(app.hook, envelope(), { webhookId: 'wh_b', secret: 'secret-b' })).status,
      ).toBe(200)
      expect(
        (await deliver(app.hook, envelope(), { webhookId: 'wh_b', secret: 'secret-a' })).status,
      ).toBe(401)
      const unknown = await deliver(app.hook, envelope(), { webhookId: 'wh_c', secret: 'secret-a' })
      expect(unknown.json.error?.code).toBe('secret_unknown')
      expect(app.contexts).toEqual(['wh_a', 'wh_b'])
    })
  })
}

function webhookRoutingAndQueue(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: webhooks`, () => {
    it('answers under a prefix, and only there', async () => {
      const app = await start({ prefix: '/hooks' })
      expect(app.hook).toBe(`${app.base}/hooks/webhooks/scheduling`)
      expect((await deliver(app.hook, envelope())).status).toBe(200)
      expect((await deliver(`${app.base}/webhooks/scheduling`, envelope())).status).toBe(404)
    })

    if (harness.configurable) {
      it('takes handlers added with .on() on the middleware', async () => {
        const checkouts: string[] = []
        const app = await start({
          configure: (webhooks) => {
            webhooks.on('event.checkout.*', (event) => void checkouts.push(event.type))
          },
        })
        await deliver(app.hook, envelope('event.checkout.completed'))
        await deliver(app.hook, envelope('event.created'))
        expect(checkouts).toEqual(['event.checkout.completed'])
      })
    }

    it('queue mode: 200 once enqueued, 503 when the queue refuses', async () => {
      let up = false
      const queued: string[] = []
      const app = await start({
        webhooks: {
          queue: {
            enqueue: async (event) => {
              if (!up) throw new Error('queue down')
              queued.push(event.id)
            },
          },
        },
      })
      const body = envelope()
      const refused = await deliver(app.hook, body)
      expect(refused.status).toBe(503)
      expect(refused.json.error?.code).toBe('queue_rejected')
      up = true
      expect((await deliver(app.hook, body)).status).toBe(200)
      expect(queued).toEqual([JSON.parse(body).id])
      expect(app.events).toHaveLength(0)
    })
  })
}

function appAroundCases(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: the rest of the app`, () => {
    it('an error while writing an answer reaches the framework’s error path, and the app keeps serving', async () => {
      const app = await start()
      const failing = { [FAIL_WRITE_HEADER]: '1' }
      const body = envelope()
      const status = (answer: Promise<Answer>) =>
        answer.then(
          (res) => res.status,
          () => 'closed',
        )
      const hook = status(deliver(app.hook, body, { headers: failing }))
      if (harness.answerWrittenBy === 'framework') {
        expect(await hook).toBe(500)
        expect(app.frameworkErrors).toEqual(['write failed'])
      } else {
        // The server writes what the framework returned, and ends a request it failed to answer.
        expect([500, 'closed']).toContain(await hook)
      }
      // The event was handled before the answer failed: the retry is a duplicate.
      expect(app.events).toHaveLength(1)
      expect((await deliver(app.hook, body)).json).toEqual({ received: true, duplicate: true })
      const login = status(request(`${app.base}/auth/scheduling/login`, { headers: failing }))
      if (harness.answerWrittenBy === 'framework') {
        expect(await login).toBe(500)
        expect(app.frameworkErrors).toEqual(['write failed', 'write failed'])
      } else expect([500, 'closed']).toContain(await login)
      expect((await request(`${app.base}/app/ping`)).json).toEqual({ pong: true })
    })

    it('passes other routes and methods through untouched', async () => {
      const app = await start()
      expect((await request(`${app.base}/app/ping`)).json).toEqual({ pong: true })
      const echo = await request(`${app.base}/app/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"hello":"world"}',
      })
      expect(echo.json).toEqual({ echo: { hello: 'world' } })
      expect((await request(`${app.base}/webhooks/scheduling/other`)).status).toBe(404)
      expect((await request(`${app.base}/auth/scheduling/other`)).status).toBe(404)
      expect((await request(`${app.base}/nothing-here`)).status).toBe(404)
      expect(app.events).toHaveLength(0)
    })

    for (const parser of harness.parsers) {
      it(`coexists with the app's own JSON body parser (${parser})`, async () => {
        const app = await start({ parser })
        const body = envelope()
        const res = await deliver(app.hook, body)
        // The design card's line behind the app's parser: the service's compact body verifies.
        expect(res.status).toBe(200)
        expect(app.events).toEqual([JSON.parse(body)])
        if (parser === 'before' && harness.parsedBefore === 'serialized') {
          // Bytes that are not the value's compact serialization cannot be told from the
          // value: today's answer and its fix, never a run.
          const spaced = JSON.stringify(JSON.parse(envelope()), null, 1)
          const refused = await deliver(app.hook, spaced)
          expect(refused.status).toBe(500)
          expect(refused.json.error?.code).toBe('body_parsed')
          expect(refused.json.error?.message).toMatch(/before|raw/i)
          expect(app.events).toHaveLength(1)
        }
        if (parser !== 'text-before') {
          const echo = await request(`${app.base}/app/echo`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"n":1}',
          })
          expect(echo.json).toEqual({ echo: { n: 1 } })
        }
      })
    }
  })
}

function logCases(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: what the developer sees in the log`, () => {
    it('a throwing handler is logged with its stack through the framework’s logger', async () => {
      const app = await start({
        webhooks: {
          on: {
            'event.created': () => {
              throw new Error('DB is down')
            },
          },
        },
      })
      const body = envelope('event.created')
      expect((await deliver(app.hook, body)).status).toBe(500)
      const line = app.logged.find((l) => l.includes('handler_failed'))
      expect(line, app.logged.join('\n---\n')).toBeDefined()
      expect(line).toContain(JSON.parse(body).id)
      expect(line).toContain('Error: DB is down')
      expect(line).toMatch(/\n\s+at /)
    })

    it('forged signatures are summarised: one line for a flood, and no secret in any line', async () => {
      const app = await start({ oauth: { clientSecret: 'wrong-client-secret-value' } })
      for (let i = 0; i < 30; i++) {
        expect((await deliver(app.hook, envelope(), { secret: 'forger' })).status).toBe(401)
      }
      expect(app.logged.filter((l) => l.includes('signature_invalid'))).toHaveLength(1)
      // The OAuth side with a wrong client secret: the cause is told, the secrets are not.
      const login = await request(`${app.base}/auth/scheduling/login`)
      const authorize = new URL(login.headers.get('location')!)
      const consent = await request(authorize.toString())
      const back = await request(consent.headers.get('location')!, {
        headers: { cookie: cookieHeader(login.headers), accept: 'application/json' },
      })
      expect(back.status).toBe(502)
      const text = app.logged.join('\n')
      expect(text).toContain('invalid_client')
      for (const secret of [
        SECRET,
        COOKIE_SECRET,
        ctx.auth().clientSecret,
        'wrong-client-secret-value',
      ]) {
        expect(text).not.toContain(secret)
      }
      const code = new URL(consent.headers.get('location')!).searchParams.get('code')!
      expect(text).not.toContain(code)
    })
  })
}
