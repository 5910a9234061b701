import type { TokenRecord } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { COOKIE_SECRET, type Started, type SuiteContext } from './context.js'
import type { AdapterHarness } from './harness.js'
import { type Answer, cookieHeader, request } from './http.js'

// The OAuth routes through the adapter: login, callback, disconnect, and what each answers.

/** Starts a sign-in at the app's login route: the authorize URL, the state cookie, the answer. */
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

/** The OAuth routes: login, callback and disconnect. */
export function defineOAuthCases(harness: AdapterHarness, ctx: SuiteContext): void {
  oauthSignIn(harness, ctx)
  oauthRefusals(harness, ctx)
  oauthDisconnect(harness, ctx)
}

function oauthSignIn(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth`, () => {
    it('login: 302 to the authorize URL with a state held in an HttpOnly, SameSite=Lax cookie', async () => {
      const app = await start()
      const { authorize, answer } = await login(app)
      expect(authorize.origin + authorize.pathname).toBe(`${ctx.auth().url}/oauth/authorize`)
      expect(authorize.searchParams.get('response_type')).toBe('code')
      expect(authorize.searchParams.get('client_id')).toBe(ctx.auth().clientId)
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
      ctx.auth().setAuthorize('approve', 'acct_flow')
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

    it('never redirects off the site, whatever returnTo says', async () => {
      const app = await start()
      for (const evil of [
        'https://evil.test/x',
        '//evil.test/x',
        '/\\evil.test',
        'javascript:alert(1)',
        '/%0d%0aSet-Cookie:x=1',
      ]) {
        ctx.auth().setAuthorize('approve', 'acct_redirect')
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
  })
}

function oauthRefusals(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth`, () => {
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
      ctx.auth().setAuthorize('deny')
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
        ctx.auth().setAuthorize('approve')
      }
    })

    it('502 and nothing stored when the token endpoint fails; no secret in the answer', async () => {
      const app = await start()
      const { authorize, cookie } = await login(app)
      ctx.auth().failNext(500)
      const back = await request(await consent(authorize), {
        headers: { cookie, accept: 'application/json' },
      })
      expect(back.status).toBe(502)
      expect(back.json.error?.code).toBe('token_exchange_failed')
      expect(back.text).not.toContain(ctx.auth().clientSecret)
      expect(back.text).not.toContain(COOKIE_SECRET)
      expect(app.connected).toEqual([])
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
}

function oauthDisconnect(harness: AdapterHarness, ctx: SuiteContext): void {
  const { start } = ctx

  describe(`${harness.name}: OAuth`, () => {
    it('disconnect: deletes the tokens of the connected account; refuses cross-site requests', async () => {
      const app = await start()
      ctx.auth().setAuthorize('approve', 'acct_bye')
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
  })
}
