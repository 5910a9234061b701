import { MemoryDedupeStore, signPayload } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { connect } from './flow.js'
import type { AdapterHarness } from './harness.js'
import { cookieHeader, deliver, envelope, rawExchange, request, stalledRequest } from './http.js'
import { SECRET, type SuiteContext } from './suite.js'

const MiB = 1024 * 1024

/**
 * Signature headers whose white-space trim, written as a regular expression, backtracks
 * quadratically: a megabyte of spaces or tabs with one more character. Answered at once now.
 */
const HOSTILE_SIGNATURES = [
  `sha256=${' '.repeat(MiB)}x`,
  `sha256=${'\t'.repeat(MiB)}x`,
  `sha256=${' \t'.repeat(MiB / 2)}x`,
  `x${' '.repeat(MiB)}x`,
  `sha256=${'a'.repeat(MiB)}`,
]

/** Characters no log line, message or page may carry from a sender (line breaks aside, ours). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/** The value of a signed cookie as JSON (its payload is base64url JSON before the dot). */
function cookiePayload(setCookie: string): Record<string, unknown> {
  const value = setCookie.slice(setCookie.indexOf('=') + 1).split(';', 1)[0]!
  return JSON.parse(Buffer.from(value.split('.')[0]!, 'base64url').toString('utf8'))
}

/** A `Cookie` header of these pairs, in this order. */
const cookies = (...pairs: string[]) => pairs.filter((p) => p !== '').join('; ')

/** The `name=value` of the one Set-Cookie whose name ends with `suffix`. */
function setCookiePair(headers: Headers, suffix: string): string {
  const found = headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .find((c) => c.split('=', 1)[0]!.endsWith(suffix) && !c.endsWith('='))
  expect(found, `a Set-Cookie named *${suffix}`).toBeDefined()
  return found!
}

export function defineHardeningCases(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx
  const middlewareFirst =
    harness.parsers.find((p) => !harness.parserFirst.includes(p)) ?? ctx.defaultParser

  describe(`${harness.name}: hardening`, () => {
    it('a 1 MiB signature header of spaces or tabs and one more character is answered 401 at once, and the next delivery 200', async () => {
      const app = await start({ parser: middlewareFirst })
      const body = envelope()
      for (const signature of HOSTILE_SIGNATURES) {
        const res = await rawExchange(
          app.hook,
          ['content-type: application/json', `x-service-signature: ${signature}`],
          body,
        )
        expect(res.status, signature.slice(0, 12)).toBe(401)
        expect(res.response).toContain('signature_invalid')
      }
      // A megabyte of leading white space before a valid signature: HTTP's optional white
      // space, dropped (by the server's parser or by core), and the delivery verifies.
      const leading = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${' \t'.repeat(MiB / 2)}${await signPayload(body, SECRET)}`,
        ],
        body,
      )
      expect(leading.status).toBe(200)
      expect(app.events).toHaveLength(1)
      const next = envelope()
      expect((await deliver(app.hook, next)).status).toBe(200)
      expect(app.events).toHaveLength(2)
    }, 120_000)

    it('other oversize headers are refused unread: a 1 MiB webhook id never reaches the secret lookup, a 1 MiB content type is 415', async () => {
      const asked: number[] = []
      const app = await start({
        parser: middlewareFirst,
        webhooks: {
          secret: (id) => {
            asked.push(id?.length ?? 0)
            return SECRET
          },
        },
      })
      const body = envelope()
      const signature = await signPayload(body, SECRET)
      const longId = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${signature}`,
          `x-service-webhook-id: wh_${' '.repeat(MiB)}x`,
        ],
        body,
      )
      expect(longId.status).toBe(401)
      expect(longId.response).toContain('secret_unknown')
      expect(asked).toEqual([])
      const longType = await rawExchange(
        app.hook,
        [
          `content-type: application/json${' '.repeat(MiB)};charset=utf-8`,
          `x-service-signature: ${signature}`,
        ],
        body,
      )
      expect(longType.status).toBe(415)
      expect(app.events).toHaveLength(0)
    }, 120_000)

    it('a secret lookup that ignores case or the id itself does not reopen replays: one run per payload and secret', async () => {
      const app = await start({
        webhooks: {
          // A case-insensitive lookup, as a `citext` column or a `_ci` collation answers.
          secret: (id) => (id?.trim().toLowerCase() === 'wh_tenant' ? SECRET : undefined),
        },
      })
      const body = envelope()
      expect((await deliver(app.hook, body, { webhookId: 'wh_tenant' })).status).toBe(200)
      for (const webhookId of ['WH_TENANT', 'Wh_Tenant', 'wh_TENANT', 'wH_tEnAnT']) {
        const replay = await deliver(app.hook, body, { webhookId })
        expect(replay.status, webhookId).toBe(200)
        expect(replay.json.duplicate, webhookId).toBe(true)
      }
      expect(app.events).toHaveLength(1)

      const ignoring = await start({ webhooks: { secret: () => SECRET } })
      for (let i = 0; i < 6; i++) {
        expect((await deliver(ignoring.hook, body, { webhookId: `wh_${i}` })).status).toBe(200)
      }
      expect(ignoring.events).toHaveLength(1)
    })

    it('one key per delivery across instances sharing a dedupe store; two webhooks (two secrets) sending one payload id both run', async () => {
      const dedupe = new MemoryDedupeStore()
      const other = 'conformance-secret-of-another-webhook'
      const lookup = (id: string | undefined) => (id === 'wh_b' ? other : SECRET)
      const one = await start({ webhooks: { secret: lookup, dedupe } })
      const two = await start({ webhooks: { secret: lookup, dedupe } })
      const body = envelope()
      expect((await deliver(one.hook, body, { webhookId: 'wh_a' })).status).toBe(200)
      const retry = await deliver(two.hook, body, { webhookId: 'WH_A' })
      expect(retry.json.duplicate).toBe(true)
      const otherWebhook = await deliver(two.hook, body, { webhookId: 'wh_b', secret: other })
      expect(otherWebhook.json.duplicate).toBeUndefined()
      expect(one.events.length + two.events.length).toBe(2)
    })

    it('bytes as received: a body whose invalid UTF-8 decodes to the signed text, at the same length, is never handled', async () => {
      // Signed: a literal U+FFFD (EF BF BD). Sent: a cut 4-byte sequence (F0 9F 98), which a
      // decoder turns into one U+FFFD: the same text, the same length, other bytes.
      const signed = Buffer.from(envelope('event.created', { note: 'x\uFFFDy' }))
      const at = signed.indexOf(Buffer.from([0xef, 0xbf, 0xbd]))
      const sent = Buffer.from(signed)
      sent.set([0xf0, 0x9f, 0x98], at)
      expect(sent.length).toBe(signed.length)
      expect(new TextDecoder().decode(sent)).toBe(new TextDecoder().decode(signed))
      const signature = await signPayload(signed, SECRET)
      for (const parser of harness.parsers) {
        const app = await start({ parser })
        const res = await deliver(app.hook, sent, { signature })
        expect(res.status, `${parser}: ${res.text}`).not.toBe(200)
        expect(app.events, parser).toHaveLength(0)
        if (harness.parserFirst.includes(parser) && res.status === 500) {
          expect(res.json.error?.code, parser).toBe('body_parsed')
        }
      }
    })

    it('no control, format or separator character a sender puts in the webhook id reaches a log line, onError or an answer', async () => {
      const app = await start({ parser: middlewareFirst, webhooks: { secret: () => undefined } })
      const messages: string[] = []
      // Sent as raw bytes: C1 controls (NEL, CSI), and the UTF-8 of bidi overrides, line
      // separators and zero-width characters (which Node reads as Latin-1, C1 bytes among them).
      const id =
        'wh_\x85\x9b2J\x9b31mred' +
        Buffer.from('\u202e\u2028\u200b\u2066\ufeff', 'utf8').toString('latin1')
      const body = envelope()
      const res = await rawExchange(
        app.hook,
        [
          'content-type: application/json',
          `x-service-signature: ${await signPayload(body, SECRET)}`,
          `x-service-webhook-id: ${id}`,
        ],
        body,
      )
      expect(res.status).toBe(401)
      const answerBody = res.response.slice(res.response.indexOf('\r\n\r\n') + 4)
      messages.push(JSON.parse(answerBody).error.message)
      messages.push(...app.logged)
      expect(app.errors).toContain('secret_unknown')
      expect(app.logged.join('\n')).toContain('secret_unknown')
      for (const message of messages) {
        for (const line of message.split('\n')) {
          expect(UNSAFE.test(line), JSON.stringify(line.slice(0, 120))).toBe(false)
        }
      }
    })

    it('bodies still arriving hold at most maxPendingBytes: past it, 503 server_busy without reading, and the budget comes back', async () => {
      const app = await start({
        parser: middlewareFirst,
        webhooks: { maxPendingBytes: 4096, bodyLimit: 2048, bodyTimeoutMs: 60_000 },
      })
      const { pathname, host } = new URL(app.hook)
      const head =
        `POST ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
        `x-service-signature: sha256=${'0'.repeat(64)}\r\ncontent-length: 2048\r\n\r\n`
      // Three stalled senders each declare 2 KiB: two fit, the third is refused at once.
      const stalled = [0, 1, 2].map(() => stalledRequest(app.hook, head, '{"type":', 3_000))
      const first = await Promise.race(stalled)
      expect(first.response).toMatch(/^HTTP\/1\.1 503/)
      expect(first.response).toContain('server_busy')
      expect(first.closed).toBe(true)
      // Full: a delivery is refused too, unread, and the service will deliver it again.
      const body = envelope()
      const busy = await deliver(app.hook, body)
      expect(busy.status).toBe(503)
      expect(busy.json.error?.code).toBe('server_busy')
      const all = await Promise.all(stalled)
      expect(all.filter((a) => a.response.startsWith('HTTP/1.1 503'))).toHaveLength(1)
      // The stalled senders gone, their bytes are given back.
      let status = 0
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await deliver(app.hook, body)).status
        if (status !== 200) await new Promise((r) => setTimeout(r, 50))
      }
      expect(status).toBe(200)
      expect(app.events).toHaveLength(1)
    }, 60_000)
  })

  describe(`${harness.name}: OAuth hardening`, () => {
    it('PKCE: every sign-in sends an S256 challenge, and a leaked code injected into another browser’s sign-in connects nobody', async () => {
      const app = await start()
      const auth = ctx.auth()
      // The victim's sign-in: the code comes back, but leaks before the victim's browser uses it.
      auth.setAuthorize('approve', 'acct_victim')
      const victim = await request(`${app.base}/auth/scheduling/login`)
      const authorize = new URL(victim.headers.get('location')!)
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256')
      expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const leaked = new URL((await request(authorize.toString())).headers.get('location')!)
      const code = leaked.searchParams.get('code')!
      // The attacker's own sign-in, with the victim's code in its callback.
      auth.setAuthorize('approve', 'acct_attacker')
      const attacker = await request(`${app.base}/auth/scheduling/login`)
      const state = new URL(attacker.headers.get('location')!).searchParams.get('state')!
      const refused = auth.counters.pkceRefused
      const injected = await request(
        `${app.base}/auth/scheduling/callback?code=${encodeURIComponent(code)}&state=${state}`,
        { headers: { cookie: cookieHeader(attacker.headers), accept: 'application/json' } },
      )
      expect(injected.status).toBe(502)
      expect(injected.json.error?.code).toBe('token_exchange_failed')
      expect(auth.counters.pkceRefused).toBe(refused + 1)
      expect(await app.store.get('acct_victim')).toBeUndefined()
      expect(app.connected).toEqual([])
      // No connection cookie with a value was set: only the sign-in cookie is cleared.
      const connectionSet = injected.headers
        .getSetCookie()
        .filter((c) => /scheduling_connection=[^;]/.test(c))
      expect(connectionSet).toEqual([])
      // The server requires PKCE: a sign-in without a challenge is refused on its page.
      const bare = new URL(authorize)
      bare.searchParams.delete('code_challenge')
      bare.searchParams.delete('code_challenge_method')
      expect((await request(bare.toString())).status).toBe(400)
      // pkce: false sends none, for a server that refuses the parameters.
      const off = await start({ oauth: { pkce: false } })
      const plain = await request(`${off.base}/auth/scheduling/login`)
      expect(new URL(plain.headers.get('location')!).searchParams.has('code_challenge')).toBe(false)
      auth.setAuthorize('approve', 'acct_1')
    })

    it('the connection cookie holds an expiry and a nonce of its own, and a disconnect or a reconnection ends every older cookie', async () => {
      const app = await start()
      const auth = ctx.auth()
      auth.setAuthorize('approve', 'acct_cookie')
      const first = await connect(app)
      const second = await connect(app)
      const a = setCookiePair(first.back.headers, 'scheduling_connection')
      const b = setCookiePair(second.back.headers, 'scheduling_connection')
      expect(a).not.toBe(b)
      const payload = cookiePayload(a)
      expect(payload.k).toBe('acct_cookie')
      expect(typeof payload.n).toBe('string')
      expect(payload.e as number).toBeGreaterThan(Date.now())
      expect(payload.e as number).toBeLessThanOrEqual(Date.now() + 31 * 24 * 3600 * 1000)
      const disconnect = (cookie: string) =>
        request(`${app.base}/auth/scheduling/disconnect`, {
          method: 'POST',
          headers: { cookie, origin: app.base, accept: 'application/json' },
        })
      // The first browser's cookie was ended by the second connection: it disconnects nothing.
      const old = await disconnect(a)
      expect(old.status).toBe(401)
      expect(old.json.error?.code).toBe('nothing_to_disconnect')
      expect(await app.store.get('acct_cookie')).toBeDefined()
      expect((await disconnect(b)).status).toBe(200)
      expect(await app.store.get('acct_cookie')).toBeUndefined()
      // Connected again: the cookie from before the disconnect does not end the new connection.
      const third = await connect(app)
      expect(third.back.status).toBe(302)
      expect((await disconnect(b)).status).toBe(401)
      expect(await app.store.get('acct_cookie')).toBeDefined()
      auth.setAuthorize('approve', 'acct_1')
    })

    it('over HTTPS the cookies are __Host- cookies (Secure, Path=/), and the flow works with them', async () => {
      const app = await start({ oauth: { secureCookies: true } })
      const login = await request(`${app.base}/auth/scheduling/login`)
      const [stateCookie] = login.headers.getSetCookie()
      expect(stateCookie).toMatch(/^__Host-scheduling_oauth_state=[^;]+; Path=\/;/)
      expect(stateCookie).toMatch(/; Secure/)
      expect(stateCookie).not.toMatch(/Domain=/i)
      const consent = await request(login.headers.get('location')!)
      const back = await request(consent.headers.get('location')!, {
        headers: { cookie: cookieHeader(login.headers) },
      })
      expect(back.status).toBe(302)
      const connection = back.headers.getSetCookie().find((c) => c.includes('_connection='))!
      expect(connection).toMatch(/^__Host-scheduling_connection=[^;]+; Path=\/;.*; Secure/)
    })

    it('cookie tossing: a state or connection cookie planted from a sibling host, or sent twice, decides nothing', async () => {
      const auth = ctx.auth()
      for (const secureCookies of [true, false]) {
        const app = await start({ oauth: { secureCookies } })
        // The attacker's own sign-in, stopped before its callback: a valid state and cookie.
        auth.setAuthorize('approve', 'acct_attacker')
        const attacker = await request(`${app.base}/auth/scheduling/login`)
        const attackerCookie = setCookiePair(attacker.headers, 'scheduling_oauth_state')
        const consent = await request(attacker.headers.get('location')!)
        const callback = consent.headers.get('location')!
        // A sibling host can set no __Host- cookie: only the plain name, with the value.
        const planted = `scheduling_oauth_state=${attackerCookie.split('=').slice(1).join('=')}`
        // The victim's browser has a sign-in of its own, too.
        auth.setAuthorize('approve', 'acct_victim')
        const victim = await request(`${app.base}/auth/scheduling/login`)
        const victimCookie = setCookiePair(victim.headers, 'scheduling_oauth_state')
        const tries = secureCookies
          ? [planted, cookies(planted, victimCookie), cookies(attackerCookie, victimCookie)]
          : [cookies(attackerCookie, victimCookie), cookies(victimCookie, attackerCookie)]
        for (const cookie of tries) {
          const res = await request(callback, { headers: { cookie, accept: 'application/json' } })
          expect(res.status, `${secureCookies} ${cookie.slice(0, 40)}`).toBe(400)
          expect(['state_missing', 'state_invalid', 'state_mismatch']).toContain(
            res.json.error?.code,
          )
        }
        expect(app.connected, String(secureCookies)).toEqual([])
        // A connection cookie sent twice (one with a more specific Path) disconnects nothing.
        auth.setAuthorize('approve', 'acct_real')
        const real = setCookiePair((await connect(app)).back.headers, 'scheduling_connection')
        auth.setAuthorize('approve', 'acct_other')
        const other = setCookiePair((await connect(app)).back.headers, 'scheduling_connection')
        const twice = await request(`${app.base}/auth/scheduling/disconnect`, {
          method: 'POST',
          headers: { cookie: cookies(other, real), origin: app.base, accept: 'application/json' },
        })
        expect(twice.status).toBe(401)
        expect(await app.store.get('acct_real')).toBeDefined()
        expect(await app.store.get('acct_other')).toBeDefined()
      }
      auth.setAuthorize('approve', 'acct_1')
    })

    it('the callback, its error page and its redirects send Referrer-Policy: no-referrer', async () => {
      const app = await start()
      const { back } = await connect(app)
      expect(back.headers.get('referrer-policy')).toBe('no-referrer')
      const failed = await request(`${app.base}/auth/scheduling/callback?code=leaked&state=x`)
      expect(failed.status).toBe(400)
      expect(failed.headers.get('referrer-policy')).toBe('no-referrer')
      expect(failed.text).toContain('<meta name="referrer" content="no-referrer">')
      const login = await request(`${app.base}/auth/scheduling/login`)
      expect(login.headers.get('referrer-policy')).toBe('no-referrer')
    })
  })
}
