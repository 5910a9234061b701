import { gzipSync } from 'node:zlib'
import { type SchedulingError, signPayload } from '@scheduling-kit/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { escapingPath } from './escape.js'
import { connect } from './flow.js'
import type { AdapterHarness } from './harness.js'
import { cookieHeader, deliver, envelope, request, stalledRequest } from './http.js'
import { SECRET, type Started, type SuiteContext } from './suite.js'

/** Runs of each property: `FUZZ_RUNS` (`pnpm fuzz` sets 20 000), else a quick few for `pnpm test`. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 40)
// `FUZZ_SEED` replays a run that failed (fast-check prints its seed).
if (process.env.FUZZ_SEED) fc.configureGlobal({ seed: Number(process.env.FUZZ_SEED) })
const FUZZ_TIMEOUT = Math.max(60_000, FUZZ_RUNS * 60)

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** What an attacker can put in a header: printable Latin-1 and tabs (fetch refuses the rest). */
const headerChar = fc.oneof(
  fc.constantFrom(...'0123456789abcdefABCDEF=sha256 \t'.split('')),
  fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  // Latin-1 letters whose low bits, or whose look, are those of hex digits.
  fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
)

/** The header the service would send, and hostile variants of it. */
function signatureVariants(valid: string): fc.Arbitrary<string> {
  const hex = valid.slice(7)
  return fc.oneof(
    // Case, prefix and white space variations: all valid.
    fc
      .tuple(
        fc.constantFrom('', 'sha256=', 'SHA256=', 'Sha256='),
        fc.boolean(),
        fc.constantFrom('', ' ', '\t', '  '),
      )
      .map(([prefix, lower, pad]) => `${pad}${prefix}${lower ? hex.toLowerCase() : hex}${pad}`),
    // One character replaced by something else.
    fc
      .tuple(fc.nat({ max: hex.length - 1 }), headerChar)
      .map(([at, c]) => `sha256=${hex.slice(0, at)}${c}${hex.slice(at + 1)}`),
    // Cut, lengthened, or any text at all.
    fc.nat({ max: hex.length }).map((n) => `sha256=${hex.slice(0, n)}`),
    fc.string({ unit: headerChar, maxLength: 6 }).map((tail) => `sha256=${hex}${tail}`),
    fc.string({ unit: headerChar, maxLength: 80 }),
  )
}

/** What verification must conclude for a header, by the spec alone. */
function oracleAccepts(header: string, expectedHex: string): boolean {
  // HTTP drops surrounding spaces and tabs of a header value.
  let value = header.replace(/^[ \t]+|[ \t]+$/g, '')
  if (value.slice(0, 7).toLowerCase() === 'sha256=') value = value.slice(7)
  return /^[0-9a-fA-F]{64}$/.test(value) && value.toLowerCase() === expectedHex.toLowerCase()
}

export function defineAttackCases(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx
  // Where the middleware reads the body itself (a parser first reads it on its own terms).
  const middlewareFirst =
    harness.parsers.find((p) => !harness.parserFirst.includes(p)) ?? ctx.defaultParser

  describe(`${harness.name}: webhook attacks`, () => {
    it('a captured delivery replayed under another webhook id, or none, runs no handler again', async () => {
      const app = await start()
      const body = envelope()
      expect((await deliver(app.hook, body, { webhookId: 'wh_original' })).status).toBe(200)
      for (const webhookId of ['wh_other', null, 'wh_original ', 'x'.repeat(300)]) {
        const replay = await deliver(app.hook, body, { webhookId })
        expect(replay.status, String(webhookId)).toBe(200)
        expect(replay.json.duplicate, String(webhookId)).toBe(true)
      }
      expect(app.events).toHaveLength(1)
    })

    it('401 secret_unknown when a secret lookup answers only white space', async () => {
      const app = await start({ webhooks: { secret: () => ' \n' } })
      const res = await deliver(app.hook, envelope(), { secret: ' \n' })
      expect(res.status).toBe(401)
      expect(res.json.error?.code).toBe('secret_unknown')
      expect(app.events).toHaveLength(0)
    })

    it(
      'property: only a header the spec accepts verifies (look-alike digits, case, prefix, junk)',
      async () => {
        const app = await start({ parser: middlewareFirst, webhooks: { dedupe: false } })
        const body = envelope()
        const valid = await signPayload(body, SECRET)
        await fc.assert(
          fc.asyncProperty(signatureVariants(valid), async (header) => {
            const res = await deliver(app.hook, body, { signature: header })
            const ok = oracleAccepts(header, valid.slice(7))
            expect(res.status, `${JSON.stringify(header)}: ${res.text}`).toBe(ok ? 200 : 401)
          }),
          { numRuns: FUZZ_RUNS },
        )
      },
      FUZZ_TIMEOUT,
    )

    it(
      'property: any change to the signed bytes, or any other secret, is refused',
      async () => {
        const app = await start({ parser: middlewareFirst, webhooks: { dedupe: false } })
        const body = new TextEncoder().encode(envelope())
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(
              fc
                .tuple(fc.nat({ max: body.length - 1 }), fc.integer({ min: 1, max: 255 }))
                .map(([at, x]) => ({ kind: 'flip' as const, at, x })),
              fc.string({ maxLength: 40 }).map((secret) => ({ kind: 'secret' as const, secret })),
            ),
            async (change) => {
              let sent = body
              let secret = SECRET
              if (change.kind === 'flip') {
                sent = body.slice()
                sent[change.at]! ^= change.x
              } else secret = change.secret
              const signature = await signPayload(body, secret)
              const res = await deliver(app.hook, sent, { signature })
              const same = change.kind === 'secret' && change.secret === SECRET
              return same ? res.status === 200 : res.status === 401 || res.status === 400
            },
          ),
          { numRuns: FUZZ_RUNS },
        )
        expect(app.events.length).toBeGreaterThanOrEqual(0)
      },
      FUZZ_TIMEOUT,
    )

    it('answers the path with a trailing slash and with a query string, like every framework', async () => {
      const app = await start()
      for (const url of [`${app.hook}/`, `${app.hook}?x=1`, `${app.hook}/?x=1&y`]) {
        const res = await deliver(url, envelope())
        expect(res.status, url).toBe(200)
      }
      expect(app.events).toHaveLength(3)
    })

    it('408 body_timeout for a body that stalls, and the connection is closed', async () => {
      const app = await start({ parser: middlewareFirst, webhooks: { bodyTimeoutMs: 300 } })
      const { pathname, host } = new URL(app.hook)
      const head =
        `POST ${pathname} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n` +
        `x-service-signature: sha256=${'0'.repeat(64)}\r\ncontent-length: 5000\r\n\r\n`
      const answer = await stalledRequest(app.hook, head, '{"type":"event.created",', 10_000)
      expect(answer.response).toMatch(/^HTTP\/1\.1 408/)
      expect(answer.response).toMatch(/body_timeout/)
      expect(answer.closed).toBe(true)
      expect(answer.ms).toBeLessThan(5000)
      expect(app.errors).toContain('body_timeout')
    })

    it('415 for a Content-Encoding: the signature covers the bytes sent, not a decoded body', async () => {
      for (const parser of harness.parsers) {
        const app = await start({ parser })
        const text = envelope()
        const res = await deliver(app.hook, gzipSync(text), {
          signature: await signPayload(text, SECRET),
          headers: { 'content-encoding': 'gzip' },
        })
        expect(res.status, parser).toBe(415)
        expect(res.json.error?.code, parser).toBe('unsupported_media_type')
        expect(app.events, parser).toHaveLength(0)
      }
    })

    it('a byte-order mark is verified as received: signed without it, a body with it is refused', async () => {
      for (const parser of harness.parsers) {
        const app = await start({ parser })
        const text = envelope()
        const withBom = `\ufeff${text}`
        const forged = await deliver(app.hook, withBom, {
          signature: await signPayload(text, SECRET),
        })
        expect(forged.status, parser).not.toBe(200)
        const honest = await deliver(app.hook, withBom)
        if (!harness.parserFirst.includes(parser)) {
          expect(honest.status, parser).toBe(200)
        } else {
          // The parser decoded the bytes first: the documented limit of a parser placed first.
          expect([200, 500], parser).toContain(honest.status)
          if (honest.status === 500) expect(honest.json.error?.code).toBe('body_parsed')
        }
        expect(app.events.length, parser).toBeLessThanOrEqual(1)
      }
    })

    it('an application/*+json type is verified on every placement of the app parser', async () => {
      for (const parser of harness.parsers) {
        const app = await start({ parser })
        const res = await deliver(app.hook, envelope(), {
          contentType: 'application/vnd.scheduling+json; charset=utf-8',
        })
        expect(res.status, parser).toBe(200)
        expect(app.events, parser).toHaveLength(1)
      }
    })

    it('__proto__ keys, a null body and an oversized body: JSON answers with the middleware first', async () => {
      for (const parser of harness.parsers) {
        const app = await start({ parser, webhooks: { bodyLimit: 4096 } })
        const proto = `{"__proto__":{"polluted":true},${envelope().slice(1)}`
        const protoAnswer = await deliver(app.hook, proto)
        const nullAnswer = await deliver(app.hook, 'null')
        const big = await deliver(app.hook, envelope('event.created', { pad: 'x'.repeat(6000) }))
        expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
        if (!harness.parserFirst.includes(parser)) {
          expect(protoAnswer.status, parser).toBe(200)
          expect(nullAnswer.status, parser).toBe(400)
          expect(nullAnswer.json.error?.code, parser).toBe('invalid_envelope')
          expect(big.status, parser).toBe(413)
          expect(big.json.error?.code, parser).toBe('payload_too_large')
        } else {
          // A parser placed first answers what it refuses itself (documented).
          expect(nullAnswer.status, parser).toBeGreaterThanOrEqual(400)
          expect(big.status, parser).toBeGreaterThanOrEqual(400)
        }
        expect(app.events.length, parser).toBeLessThanOrEqual(1)
      }
    })
  })

  describe(`${harness.name}: OAuth attacks`, () => {
    const attacks = [
      '/.//evil.test',
      '/./\\evil.test',
      '/a/..//evil.test',
      '/%2e//evil.test',
      '/%2E%2E//evil.test',
      '/.%2e//evil.test',
      '/a/%2e%2e//evil.test',
      '/%2e/%2e//evil.test',
      '/\t/evil.test',
      '/.\t//evil.test',
      '/%09/evil.test',
      '/..\\/evil.test',
    ]

    function expectSameOrigin(app: Started, location: string | null, what: string) {
      expect(location, what).not.toBeNull()
      expect(location!.startsWith('/'), `${what} -> ${location}`).toBe(true)
      expect(/^\/[/\\]/.test(location!), `${what} -> ${location}`).toBe(false)
      expect(new URL(location!, `${app.base}/auth/scheduling/callback`).origin).toBe(app.base)
    }

    it('never redirects off the site after sign-in, whatever dot segments returnTo holds', async () => {
      const app = await start()
      for (const evil of attacks) {
        const { back } = await connect(app, `?returnTo=${encodeURIComponent(evil)}`)
        expect(back.status, evil).toBe(302)
        expectSameOrigin(app, back.headers.get('location'), evil)
      }
    })

    it(
      'property: every returnTo /disconnect accepts stays on the same origin',
      async () => {
        // A key of its own: a disconnect ends the cookie, and this sends one request per run.
        const app = await start({ oauth: { disconnectKey: () => 'acct_returnto' } })
        const connection = ''
        const path = escapingPath()
        await fc.assert(
          fc.asyncProperty(path, async (returnTo) => {
            const res = await request(
              `${app.base}/auth/scheduling/disconnect?returnTo=${encodeURIComponent(returnTo)}`,
              { method: 'POST', headers: { cookie: connection, origin: app.base } },
            )
            expect(res.status).toBe(303)
            expectSameOrigin(app, res.headers.get('location'), returnTo)
          }),
          { numRuns: FUZZ_RUNS * 2 },
        )
      },
      FUZZ_TIMEOUT,
    )

    it('HEAD never runs the callback or disconnect: 405, nothing exchanged or deleted', async () => {
      const app = await start()
      const auth = ctx.auth()
      const login = await request(`${app.base}/auth/scheduling/login`)
      const cookie = cookieHeader(login.headers)
      const consent = await request(login.headers.get('location')!)
      const callback = consent.headers.get('location')!
      const exchanges = auth.counters.exchange
      const head = await request(callback, { method: 'HEAD', headers: { cookie } })
      expect(head.status).toBe(405)
      expect(head.headers.get('allow')).toBe('GET')
      expect(auth.counters.exchange).toBe(exchanges)
      expect(app.connected).toEqual([])
      // The code was not spent: the real callback still works.
      const back = await request(callback, { headers: { cookie } })
      expect(back.status).toBe(302)
      expect(app.connected).toHaveLength(1)
      const connection = cookieHeader(back.headers)
      const key = app.connected[0]!
      const bye = await request(`${app.base}/auth/scheduling/disconnect`, {
        method: 'HEAD',
        headers: { cookie: connection, origin: app.base },
      })
      expect(bye.status).toBe(405)
      expect(await app.store.get(key)).toBeDefined()
    })

    it('the state is single-use: the same state and cookie with a fresh code are refused', async () => {
      const app = await start()
      const auth = ctx.auth()
      auth.setAuthorize('approve', 'acct_once')
      const { back, cookie, callback } = await connect(app)
      expect(back.status).toBe(302)
      const before = await app.store.get('acct_once')
      const replay = new URL(callback)
      auth.setAuthorize('approve', 'acct_attacker')
      replay.searchParams.set(
        'code',
        auth.issueCode('acct_attacker', `${app.base}/auth/scheduling/callback`),
      )
      const again = await request(replay.toString(), {
        headers: { cookie, accept: 'application/json' },
      })
      expect(again.status).toBe(400)
      expect(again.json.error?.code).toBe('state_used')
      expect(await app.store.get('acct_attacker')).toBeUndefined()
      expect(await app.store.get('acct_once')).toEqual(before)
      expect(app.connected).toEqual(['acct_once'])
      auth.setAuthorize('approve', 'acct_1')
    })

    it('Secure cookies: from an https redirectUri by default, or the secureCookies option, never from headers', async () => {
      const loginCookie = async (app: Started, headers: Record<string, string> = {}) => {
        const res = await request(`${app.base}/auth/scheduling/login`, { headers })
        return res.headers.getSetCookie().join('\n')
      }
      const https = await start({
        oauth: { redirectUri: 'https://app.example.test/auth/scheduling/callback' },
      })
      expect(await loginCookie(https)).toMatch(/; Secure/)
      const forced = await start({ oauth: { secureCookies: true } })
      expect(await loginCookie(forced)).toMatch(/; Secure/)
      const plain = await start()
      expect(await loginCookie(plain, { 'x-forwarded-proto': 'https' })).not.toMatch(/Secure/)
      const off = await start({
        oauth: {
          redirectUri: 'https://app.example.test/auth/scheduling/callback',
          secureCookies: false,
        },
      })
      expect(await loginCookie(off)).not.toMatch(/Secure/)
    })

    it('disconnect refuses a request that does not show this origin (scheme included)', async () => {
      const app = await start()
      const auth = ctx.auth()
      auth.setAuthorize('approve', 'acct_csrf')
      const { back } = await connect(app)
      const connection = cookieHeader(back.headers)
      const url = `${app.base}/auth/scheduling/disconnect`
      const https = app.base.replace('http:', 'https:')
      for (const headers of [
        {},
        { origin: https },
        { origin: 'null' },
        { origin: `${app.base}.evil.test` },
        { 'sec-fetch-site': 'same-site' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'none' },
        { origin: 'https://evil.test', 'sec-fetch-site': 'same-origin' },
      ] as Record<string, string>[]) {
        const res = await request(url, {
          method: 'POST',
          headers: { ...headers, cookie: connection, accept: 'application/json' },
        })
        expect(res.status, JSON.stringify(headers)).toBe(403)
        expect(res.json.error?.code).toBe('cross_origin')
      }
      expect(await app.store.get('acct_csrf')).toBeDefined()
      const same = await request(url, {
        method: 'POST',
        headers: { 'sec-fetch-site': 'same-origin', cookie: connection },
      })
      expect(same.status).toBe(303)
      expect(await app.store.get('acct_csrf')).toBeUndefined()
      auth.setAuthorize('approve', 'acct_1')
    })

    it("server text in errors is capped and stripped of control characters before it reaches onError's logs", async () => {
      const reported: SchedulingError<string>[] = []
      const app = await start({ oauth: { onError: (error) => void reported.push(error) } })
      const auth = ctx.auth()
      const nasty = `${'A'.repeat(3000)}\r\n[ERROR] forged log line\u001b[31m\u202e`
      auth.failNext({
        status: 400,
        body: { error: 'invalid_grant\r\nX: y', error_description: nasty },
      })
      const { back } = await connect(app)
      expect(back.status).toBe(502)
      // The refusal's text is read only on a callback of this browser's own sign-in.
      const login = await request(`${app.base}/auth/scheduling/login`)
      const state = new URL(login.headers.get('location')!).searchParams.get('state')!
      const refused = await request(
        `${app.base}/auth/scheduling/callback?error=server_error&error_description=${encodeURIComponent(nasty)}&state=${state}`,
        { headers: { accept: 'application/json', cookie: cookieHeader(login.headers) } },
      )
      expect(refused.status).toBe(400)
      expect(refused.json.error?.code).toBe('authorization_failed')
      expect(refused.json.error?.message).toContain('It said: "AAAA')
      const messages = reported.flatMap((error) => [
        error.message,
        String((error.cause as Error | undefined)?.message ?? ''),
      ])
      expect(messages.length).toBeGreaterThanOrEqual(4)
      for (const message of messages) {
        expect(CONTROL.test(message), message.slice(0, 80)).toBe(false)
        expect(message).not.toContain('\u202e')
        expect(message.length).toBeLessThan(600)
      }
      expect(reported[0]?.code).toBe('token_exchange_failed')
      expect(refused.json.error?.message.length).toBeLessThan(600)
    })
  })
}
