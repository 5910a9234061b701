import { describe, expect, it } from 'vitest'
import type { SuiteContext } from './context.js'
import { connect } from './flow.js'
import { cookiePayload, cookies, setCookiePair } from './hardening.js'
import type { AdapterHarness } from './harness.js'
import { cookieHeader, request } from './http.js'

// The OAuth routes' edges through the adapter: hostile cookies and headers, bounded reads.

/** The OAuth routes hardened. */
export function defineOAuthHardeningCases(harness: AdapterHarness, ctx: SuiteContext): void {
  oauthLeakHardening(harness, ctx)
  oauthCookieHardening(harness, ctx)
}

function oauthLeakHardening(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

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

function oauthCookieHardening(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth hardening`, () => {
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
  })
}
