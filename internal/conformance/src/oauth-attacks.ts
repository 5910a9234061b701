import type { SchedulingError } from '@scheduling-kit/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CONTROL, FUZZ_RUNS, FUZZ_TIMEOUT } from './attacks.js'
import type { Started, SuiteContext } from './context.js'
import { escapingPath } from './escape.js'
import { connect } from './flow.js'
import type { AdapterHarness } from './harness.js'
import { cookieHeader, request } from './http.js'

// Attacks on the OAuth routes through the adapter: forged states, leaked codes, open redirects.

/** `returnTo` values that leave the app's origin once a browser or a URL parser resolves them. */
const ATTACKS = [
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

/** The redirect stays on the app's origin, whatever `what` asked for. */
function expectSameOrigin(app: Started, location: string | null, what: string) {
  expect(location, what).not.toBeNull()
  expect(location!.startsWith('/'), `${what} -> ${location}`).toBe(true)
  expect(/^\/[/\\]/.test(location!), `${what} -> ${location}`).toBe(false)
  expect(new URL(location!, `${app.base}/auth/scheduling/callback`).origin).toBe(app.base)
}

/** Attacks on the OAuth routes. */
export function defineOAuthAttackCases(harness: AdapterHarness, ctx: SuiteContext): void {
  oauthRedirectAttacks(harness, ctx)
  oauthReplayAttacks(harness, ctx)
  oauthLeakAttacks(harness, ctx)
}

function oauthRedirectAttacks(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth attacks`, () => {
    it('never redirects off the site after sign-in, whatever dot segments returnTo holds', async () => {
      const app = await start()
      for (const evil of ATTACKS) {
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
  })
}

function oauthReplayAttacks(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth attacks`, () => {
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
  })
}

function oauthLeakAttacks(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth attacks`, () => {
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
