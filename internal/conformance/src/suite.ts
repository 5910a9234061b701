import {
  type AnyWebhookEvent,
  MemoryTokenStore,
  type OAuthRoutesOptions,
  type TokenRecord,
  type WebhookHandlerOptions,
} from '@scheduling-kit/core'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { defineAttackCases } from './attacks.js'
import { defineHardeningCases } from './hardening.js'
import type { AdapterHarness, AppSetup, ParserPlacement } from './harness.js'
import { FAIL_WRITE_HEADER } from './harness.js'
import { type Answer, cookieHeader, deliver, envelope, freePort, request } from './http.js'
import { defineSubscriptionCases } from './subscriptions.js'

export const SECRET = 'conformance-secret'
export const COOKIE_SECRET = 'conformance-cookie-secret-0123456789'

/** An app under test, started by the suite. */
export interface Started {
  base: string
  hook: string
  events: AnyWebhookEvent[]
  contexts: Array<string | undefined>
  errors: string[]
  store: MemoryTokenStore
  connected: string[]
  frameworkErrors: string[]
  /** Lines the framework's logger (or the console) printed. */
  logged: string[]
}

export interface StartOptions {
  webhooks?: Partial<WebhookHandlerOptions>
  configure?: AppSetup['configure']
  prefix?: string
  parser?: ParserPlacement
  oauth?: Partial<OAuthRoutesOptions>
}

/** What the attack cases need from the suite. */
export interface SuiteContext {
  start(options?: StartOptions): Promise<Started>
  auth(): TokenServer
  /** The placement the suite uses when a case does not name one. */
  defaultParser: ParserPlacement
}

/** Defines the whole conformance suite for one adapter. Call it from the adapter's test file. */
export function runConformance(harness: AdapterHarness): void {
  let auth: TokenServer
  let running: Array<{ close(): Promise<void> }> = []
  beforeAll(async () => {
    auth = await startTokenServer()
  })
  afterAll(() => auth.close())
  afterEach(async () => {
    await Promise.all(running.map((r) => r.close()))
    running = []
  })

  // Where the raw bytes survive; the `before` placement has its own test.
  const defaultParser =
    harness.parsers.find((p) => p !== 'before' || harness.parsedBefore === 'raw') ??
    harness.parsers[0]!

  async function start(options: StartOptions = {}): Promise<Started> {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const events: AnyWebhookEvent[] = []
    const contexts: Array<string | undefined> = []
    const errors: string[] = []
    const connected: string[] = []
    const frameworkErrors: string[] = []
    const logged: string[] = []
    const store = new MemoryTokenStore()
    const redirectUri = `${base}/auth/scheduling/callback`
    auth.allowRedirectUri(redirectUri)
    const setup: AppSetup = {
      frameworkErrors,
      logged,
      prefix: options.prefix ?? '',
      parser: options.parser ?? defaultParser,
      configure: options.configure,
      webhooks: {
        secret: SECRET,
        onAny: (event, ctx) => {
          events.push(event)
          contexts.push(ctx.webhookId)
        },
        onError: (error) => void errors.push(error.code),
        ...options.webhooks,
      },
      oauth: {
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        redirectUri,
        authUrl: auth.url,
        apiUrl: `${auth.url}/v1`,
        tokenStore: store,
        cookieSecret: COOKIE_SECRET,
        successRedirect: '/app/ping',
        onConnected: ({ key }) => void connected.push(key),
        ...options.oauth,
      },
    }
    running.push(await harness.start(port, setup))
    return {
      base,
      hook: `${base}${setup.prefix}/webhooks/scheduling`,
      events,
      contexts,
      errors,
      store,
      connected,
      frameworkErrors,
      logged,
    }
  }

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

    it('accepts a lower-case signature without the prefix', async () => {
      const app = await start()
      const body = envelope()
      const { signPayload } = await import('@scheduling-kit/core')
      const header = (await signPayload(body, SECRET)).slice(7).toLowerCase()
      expect((await deliver(app.hook, body, { signature: header })).status).toBe(200)
    })

    it('400 for a signed body that is not an envelope', async () => {
      const app = await start()
      const res = await deliver(app.hook, '{"type":"event.created"}')
      expect(res.status).toBe(400)
      expect(res.json.error?.code).toBe('invalid_id')
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
  })

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
        if (parser === 'before' && harness.parsedBefore === 'body_parsed') {
          expect(res.status).toBe(500)
          expect(res.json.error?.code).toBe('body_parsed')
          expect(res.json.error?.message).toMatch(/before|raw/i)
        } else {
          expect(res.status).toBe(200)
          expect(app.events).toEqual([JSON.parse(body)])
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
        auth.clientSecret,
        'wrong-client-secret-value',
      ]) {
        expect(text).not.toContain(secret)
      }
      const code = new URL(consent.headers.get('location')!).searchParams.get('code')!
      expect(text).not.toContain(code)
    })
  })

  describe(`${harness.name}: OAuth`, () => {
    async function login(
      app: Started,
      query = '',
    ): Promise<{ authorize: URL; cookie: string; answer: Answer }> {
      const answer = await request(`${app.base}/auth/scheduling/login${query}`)
      expect(answer.status).toBe(302)
      return {
        authorize: new URL(answer.headers.get('location')!),
        cookie: cookieHeader(answer.headers),
        answer,
      }
    }

    /** The consent page's answer: where it sends the browser back. */
    async function consent(authorize: URL): Promise<string> {
      const res = await request(authorize.toString())
      expect(res.status).toBe(302)
      return res.headers.get('location')!
    }

    it('login: 302 to the authorize URL with a state held in an HttpOnly, SameSite=Lax cookie', async () => {
      const app = await start()
      const { authorize, answer } = await login(app)
      expect(authorize.origin + authorize.pathname).toBe(`${auth.url}/oauth/authorize`)
      expect(authorize.searchParams.get('response_type')).toBe('code')
      expect(authorize.searchParams.get('client_id')).toBe(auth.clientId)
      expect(authorize.searchParams.get('redirect_uri')).toBe(
        `${app.base}/auth/scheduling/callback`,
      )
      const state = authorize.searchParams.get('state')!
      expect(state.length).toBeGreaterThanOrEqual(32)
      const [cookie] = answer.headers.getSetCookie()
      expect(cookie).toMatch(/^scheduling_oauth_state=/)
      expect(cookie).toMatch(/HttpOnly/)
      expect(cookie).toMatch(/SameSite=Lax/)
      expect(cookie).toMatch(/Path=\/auth\/scheduling/)
      expect(cookie).toMatch(/Max-Age=600/)
      expect(cookie).not.toMatch(/Secure/)
      expect(cookie).not.toContain(state)
      const second = await login(app)
      expect(second.authorize.searchParams.get('state')).not.toBe(state)
    })

    it('the whole flow: consent, callback, tokens stored under the account id, back to returnTo', async () => {
      const app = await start()
      auth.setAuthorize('approve', 'acct_flow')
      const { authorize, cookie } = await login(app, '?returnTo=%2Fdashboard%3Ftab%3D1')
      const back = await request(await consent(authorize), { headers: { cookie } })
      expect(back.status).toBe(302)
      expect(back.headers.get('location')).toBe('/dashboard?tab=1')
      const record = (await app.store.get('acct_flow')) as TokenRecord
      expect(record.accessToken).toMatch(/^at_/)
      expect(record.refreshToken).toMatch(/^rt_/)
      expect(record.expiresAt).toBeGreaterThan(Date.now() + 7_000_000)
      expect(record.account).toMatchObject({ id: 'acct_flow' })
      expect(app.connected).toEqual(['acct_flow'])
      const cleared = back.headers
        .getSetCookie()
        .find((c) => c.startsWith('scheduling_oauth_state='))
      expect(cleared).toMatch(/Max-Age=0/)
    })

    it('400 and nothing stored when the state does not match, is missing, or is replayed', async () => {
      const app = await start()
      const { authorize, cookie } = await login(app)
      const callback = new URL(await consent(authorize))
      const forged = new URL(callback)
      forged.searchParams.set('state', 'forged-state-value')
      const mismatch = await request(forged.toString(), {
        headers: { cookie, accept: 'application/json' },
      })
      expect(mismatch.status).toBe(400)
      expect(mismatch.json.error?.code).toBe('state_mismatch')
      const noCookie = await request(callback.toString(), {
        headers: { accept: 'application/json' },
      })
      expect(noCookie.status).toBe(400)
      expect(noCookie.json.error?.code).toBe('state_missing')
      const tampered = await request(callback.toString(), {
        headers: { cookie: cookie.replace(/=(.)/, '=x$1'), accept: 'application/json' },
      })
      expect(tampered.status).toBe(400)
      expect(app.connected).toEqual([])
      expect(await app.store.get('acct_1')).toBeUndefined()
    })

    it("403 when the user declines on the consent page, as a page for browsers with the server's words", async () => {
      const app = await start()
      auth.setAuthorize('deny')
      try {
        const { authorize, cookie } = await login(app)
        const back = await request(await consent(authorize), {
          headers: { cookie, accept: 'text/html' },
        })
        expect(back.status).toBe(403)
        expect(back.headers.get('content-type')).toMatch(/text\/html/)
        expect(back.text).toContain('access_denied')
        expect(back.text).toContain('The account owner denied the request.')
        expect(app.connected).toEqual([])
      } finally {
        auth.setAuthorize('approve')
      }
    })

    it('502 and nothing stored when the token endpoint fails; no secret in the answer', async () => {
      const app = await start()
      const { authorize, cookie } = await login(app)
      auth.failNext(500)
      const back = await request(await consent(authorize), {
        headers: { cookie, accept: 'application/json' },
      })
      expect(back.status).toBe(502)
      expect(back.json.error?.code).toBe('token_exchange_failed')
      expect(back.text).not.toContain(auth.clientSecret)
      expect(back.text).not.toContain(COOKIE_SECRET)
      expect(app.connected).toEqual([])
    })

    it('never redirects off the site, whatever returnTo says', async () => {
      const app = await start()
      for (const evil of [
        'https://evil.test/x',
        '//evil.test/x',
        '/\\evil.test',
        'javascript:alert(1)',
        '/%0d%0aSet-Cookie:x=1',
      ]) {
        auth.setAuthorize('approve', 'acct_redirect')
        const { authorize, cookie } = await login(app, `?returnTo=${encodeURIComponent(evil)}`)
        const back = await request(await consent(authorize), { headers: { cookie } })
        expect(back.status, evil).toBe(302)
        const location = back.headers.get('location')!
        expect(
          location.startsWith('/') && !location.startsWith('//'),
          `${evil} -> ${location}`,
        ).toBe(true)
        expect(new URL(location, app.base).origin).toBe(app.base)
      }
    })

    it('disconnect: deletes the tokens of the connected account; refuses cross-site requests', async () => {
      const app = await start()
      auth.setAuthorize('approve', 'acct_bye')
      const { authorize, cookie } = await login(app)
      const back = await request(await consent(authorize), { headers: { cookie } })
      const connection = cookieHeader(back.headers)
      expect(await app.store.get('acct_bye')).toBeDefined()
      const url = `${app.base}/auth/scheduling/disconnect`
      const cross = await request(url, {
        method: 'POST',
        headers: { cookie: connection, origin: 'https://evil.test', accept: 'application/json' },
      })
      expect(cross.status).toBe(403)
      expect(await app.store.get('acct_bye')).toBeDefined()
      const anonymous = await request(url, {
        method: 'POST',
        headers: { origin: app.base, accept: 'application/json' },
      })
      expect(anonymous.status).toBe(401)
      const bye = await request(url, {
        method: 'POST',
        headers: { cookie: connection, origin: app.base },
      })
      expect(bye.status).toBe(303)
      expect(bye.headers.get('location')).toBe('/app/ping')
      expect(await app.store.get('acct_bye')).toBeUndefined()
    })

    it('405 for a wrong method on its routes', async () => {
      const app = await start()
      const res = await request(`${app.base}/auth/scheduling/disconnect`, {
        headers: { accept: 'application/json' },
      })
      expect(res.status).toBe(405)
      expect(res.headers.get('allow')).toBe('POST')
    })
  })

  defineAttackCases(harness, { start, auth: () => auth, defaultParser })
  defineHardeningCases(harness, { start, auth: () => auth, defaultParser })
  defineSubscriptionCases(harness, { start, auth: () => auth, defaultParser })
}
