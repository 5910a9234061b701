import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { escapingPath } from '../../../../internal/conformance/src/escape.js'
import { isOAuthFlowError, OAuthFlowError } from '../../src/errors/connection.js'
import { isWebhookError } from '../../src/errors/errors.js'
import { readSignedCookie, signCookie } from '../../src/oauth/cookies.js'
import type { OAuthResponse, OAuthRoutesOptions } from '../../src/oauth/options.js'
import { safeReturnTo } from '../../src/oauth/redirect.js'
import { createOAuthRoutes, type OAuthRoutes } from '../../src/oauth/routes.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

describe('safeReturnTo', () => {
  it.each(['/', '/dashboard', '/a/b?c=1&d=%2F#top', '/caf%C3%A9'])(
    'keeps the same-site path %s',
    (path) => {
      expect(safeReturnTo(path)).toBe(path)
    },
  )

  it.each([
    'https://evil.test',
    '//evil.test',
    '/\\evil.test',
    '\\\\evil.test',
    'javascript:alert(1)',
    'evil.test',
    '/ok\r\nSet-Cookie: x=1',
    '/\t/evil.test',
    // They resolve to //evil.test once the browser removes dot segments.
    '/.//evil.test',
    '/a/..//evil.test',
    '/%2e//evil.test',
    '/%2E%2E//evil.test',
    '/.%2e//evil.test',
    '/a/b/%2e%2e/%2e%2e//evil.test',
    '/./\\evil.test',
    '',
    undefined,
    null,
  ])('refuses %j', (value) => {
    expect(safeReturnTo(value)).toBeUndefined()
  })

  it('property: whatever it keeps resolves to the same origin, on any base', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl(),
          fc.string().map((s) => `/${s}`),
        ),
        (input) => {
          const kept = safeReturnTo(input)
          if (kept === undefined) return
          for (const base of ['https://app.example.com', 'http://127.0.0.1:3000/deep/path']) {
            expect(new URL(kept, base).origin).toBe(new URL(base).origin)
          }
          expect(kept.startsWith('/')).toBe(true)
          expect(kept.startsWith('//')).toBe(false)
        },
      ),
      { numRuns: 3000 },
    )
  })
})

describe('safeReturnTo against paths built to escape', () => {
  const path = escapingPath()

  it('property: what it keeps is resolved, stays on the origin, and resolves to itself from any page', () => {
    fc.assert(
      fc.property(path, (input) => {
        const kept = safeReturnTo(input)
        if (kept === undefined) return
        expect(kept[0]).toBe('/')
        expect(/^\/[/\\]/.test(kept)).toBe(false)
        for (const page of [
          'https://app.example.com/',
          'https://app.example.com/auth/scheduling/callback',
          'http://127.0.0.1:3000/a/b/c/d',
        ]) {
          const resolved = new URL(kept, page)
          expect(resolved.origin).toBe(new URL(page).origin)
          expect(resolved.pathname + resolved.search + resolved.hash).toBe(kept)
        }
      }),
      { numRuns: 10_000 },
    )
  })
})

describe('signed cookies', () => {
  const secret = 'cookie-secret-0123456789abcdef'

  it('round-trip, and refuse any change, another secret or another cookie name', async () => {
    const value = await signCookie('a', { k: 'acct_1' }, secret)
    expect(await readSignedCookie('a', value, secret)).toEqual({ k: 'acct_1' })
    expect(await readSignedCookie('a', value, `${secret}x`)).toBeUndefined()
    expect(await readSignedCookie('b', value, secret)).toBeUndefined()
    const [payload, mac] = value.split('.')
    const other = await signCookie('a', { k: 'acct_2' }, secret)
    expect(await readSignedCookie('a', `${other.split('.')[0]}.${mac}`, secret)).toBeUndefined()
    expect(await readSignedCookie('a', `${payload}.`, secret)).toBeUndefined()
    expect(await readSignedCookie('a', payload, secret)).toBeUndefined()
    expect(await readSignedCookie('a', undefined, secret)).toBeUndefined()
  })
})

describe('createOAuthRoutes', () => {
  const base = {
    clientId: 'c',
    clientSecret: 's',
    redirectUri: 'https://app.test/auth/scheduling/callback',
    authUrl: 'https://auth.test',
    tokenStore: new MemoryTokenStore(),
  }

  it('warns once, without the secret, when no cookieSecret is given, and still works', async () => {
    const warn = vi.fn()
    const logger = { debug() {}, info() {}, warn, error() {} }
    const routes = createOAuthRoutes({ ...base, logger })
    createOAuthRoutes({ ...base, logger })
    expect(warn).toHaveBeenCalledOnce()
    expect(warn.mock.calls[0]![0]).toMatch(/cookieSecret/)
    const answer = await routes.handle({
      method: 'GET',
      path: '/login',
      headers: {},
      mountPath: '/auth/scheduling',
      raw: undefined,
    })
    expect(answer?.status).toBe(302)
    expect(String(answer?.headers['set-cookie'])).toMatch(/; Secure$/)
  })

  it('refuses a short cookieSecret and a store without the three methods', () => {
    expect(() => createOAuthRoutes({ ...base, cookieSecret: 'short' })).toThrow(/16 characters/)
    expect(() => createOAuthRoutes({ ...base, tokenStore: {} as never })).toThrow(/tokenStore/)
  })

  it('leaves paths that are not its own to the app', async () => {
    const routes = createOAuthRoutes({ ...base, cookieSecret: 'x'.repeat(32) })
    const request = { method: 'GET', headers: {}, mountPath: '', raw: undefined }
    expect(await routes.handle({ ...request, path: '/other' })).toBeUndefined()
    expect(await routes.handle({ ...request, path: '/login/extra' })).toBeUndefined()
  })
})

describe('each failure of the OAuth routes has its own code', () => {
  const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
  let server: TokenServer
  beforeAll(async () => {
    server = await startTokenServer({ redirectUri })
  })
  afterAll(() => server.close())

  const options = (extra: Partial<OAuthRoutesOptions<{ user: string }>> = {}) => ({
    clientId: 'client-123',
    clientSecret: 'client-secret-xyz',
    redirectUri,
    authUrl: server.url,
    tokenStore: new MemoryTokenStore(),
    cookieSecret: 'c'.repeat(32),
    ...extra,
  })
  const request = (method: string, path: string, headers: Record<string, string> = {}) => ({
    method,
    path,
    headers: { accept: 'application/json', origin: 'http://127.0.0.1:9', ...headers },
    mountPath: '/auth/scheduling',
    raw: { user: 'u1' },
  })

  /** Runs a whole sign-in: /login, then /callback with a code the server issued. */
  function signIn(routes: OAuthRoutes<{ user: string }>) {
    return callbackWith(
      routes,
      (state) => `code=${server.issueCode('acct_1', redirectUri)}&state=${state}`,
    )
  }
  const code = (answer: OAuthResponse | undefined) => JSON.parse(answer!.body).error?.code

  it('key_failed when the key option throws; nothing is stored', async () => {
    const tokenStore = new MemoryTokenStore()
    const routes = createOAuthRoutes(
      options({
        tokenStore,
        key: () => {
          throw new Error('no tenant')
        },
      }),
    )
    const answer = await signIn(routes)
    expect([answer!.status, code(answer)]).toEqual([500, 'key_failed'])
    expect(await tokenStore.get('acct_1')).toBeUndefined()
  })

  it('key_failed, not identify_failed, when the key option gives no key', async () => {
    const routes = createOAuthRoutes(options({ key: async () => '' }))
    expect(code(await signIn(routes))).toBe('key_failed')
  })

  it('connected_hook_failed when onConnected throws, and the tokens stay stored', async () => {
    const tokenStore = new MemoryTokenStore()
    const seen: unknown[] = []
    const routes = createOAuthRoutes(
      options({
        tokenStore,
        onConnected: async () => {
          throw new Error('crm down')
        },
        onError: (error) => seen.push(error.cause),
      }),
    )
    const answer = await signIn(routes)
    expect([answer!.status, code(answer)]).toEqual([500, 'connected_hook_failed'])
    expect((await tokenStore.get('acct_1'))?.accessToken).toBeTypeOf('string')
    expect(String(seen[0])).toMatch(/crm down/)
  })

  it('store_failed when the token store refuses the tokens', async () => {
    const tokenStore = new MemoryTokenStore()
    const full = async () => {
      throw new Error('disk full')
    }
    tokenStore.set = full
    tokenStore.compareAndSet = full
    expect(code(await signIn(createOAuthRoutes(options({ tokenStore }))))).toBe('store_failed')
  })

  it('state_store_failed when the state store fails, state_used on a replay', async () => {
    const broken = createOAuthRoutes(
      options({
        stateStore: {
          claim: () => Promise.reject(new Error('redis down')),
          complete: () => {},
          release: () => {},
        },
      }),
    )
    expect(code(await signIn(broken))).toBe('state_store_failed')
  })

  it('disconnect: disconnect_key_failed, nothing_to_disconnect, disconnected_hook_failed', async () => {
    const failing = createOAuthRoutes(
      options({
        disconnectKey: () => {
          throw new Error('session store down')
        },
      }),
    )
    expect(code(await failing.handle(request('POST', '/disconnect')))).toBe('disconnect_key_failed')
    const none = createOAuthRoutes(options())
    const nothing = await none.handle(request('POST', '/disconnect'))
    expect([nothing!.status, code(nothing)]).toEqual([401, 'nothing_to_disconnect'])
    const tokenStore = new MemoryTokenStore()
    await tokenStore.set('acct_1', {
      accessToken: 'a',
      refreshToken: 'r',
      tokenType: 'bearer',
      expiresAt: 1,
    })
    const hooked = createOAuthRoutes(
      options({
        tokenStore,
        disconnectKey: () => 'acct_1',
        onDisconnected: () => {
          throw new Error('audit log down')
        },
      }),
    )
    expect(code(await hooked.handle(request('POST', '/disconnect')))).toBe(
      'disconnected_hook_failed',
    )
    expect(await tokenStore.get('acct_1')).toBeUndefined()
  })

  /** /login, then a callback of `query` (with this sign-in's state) from the browser that started it. */
  async function callbackWith(
    routes: OAuthRoutes<{ user: string }>,
    query: (state: string) => string,
    accept = 'application/json',
  ) {
    const login = await routes.handle(request('GET', '/login'))
    const cookie = String(login!.headers['set-cookie']).split(';')[0]!
    const state = new URL(String(login!.headers.location)).searchParams.get('state')!
    return routes.handle(request('GET', `/callback?${query(state)}`, { cookie, accept }))
  }

  it('cookieSecret rotation: a list, newest first; cookies signed with an older secret still count, new ones are signed with the newest', async () => {
    const [old, newer] = ['o'.repeat(32), 'n'.repeat(32)]
    const tokenStore = new MemoryTokenStore()
    const before = createOAuthRoutes(options({ tokenStore, cookieSecret: old }))
    const login = await before.handle(request('GET', '/login'))
    const stateCookie = String(login!.headers['set-cookie']).split(';')[0]!
    const state = new URL(String(login!.headers.location)).searchParams.get('state')!
    // The sign-in began before the deploy and ends after it.
    const rotated = createOAuthRoutes(options({ tokenStore, cookieSecret: [newer, old] }))
    const query = `code=${server.issueCode('acct_1', redirectUri)}&state=${state}`
    const done = await rotated.handle(request('GET', `/callback?${query}`, { cookie: stateCookie }))
    expect(done!.status).toBe(302)
    const connection = ([] as string[])
      .concat(done!.headers['set-cookie']!)
      .find((c) => c.includes('connection') && !c.includes('Max-Age=0'))!
      .split(';')[0]!
    expect(await rotated.connectedKey({ cookie: connection })).toBe('acct_1')
    // Signed with the newest: the newest alone reads it, the old one alone does not.
    const onlyNew = createOAuthRoutes(options({ tokenStore, cookieSecret: [newer] }))
    expect(await onlyNew.connectedKey({ cookie: connection })).toBe('acct_1')
    expect(await before.connectedKey({ cookie: connection })).toBeUndefined()
    // Once the old secret is dropped, a cookie it signed no longer counts.
    const again = await before.handle(request('GET', '/login'))
    const oldState = String(again!.headers['set-cookie']).split(';')[0]!
    const oldQuery = `code=${server.issueCode('acct_1', redirectUri)}&state=${new URL(String(again!.headers.location)).searchParams.get('state')}`
    const refused = await onlyNew.handle(
      request('GET', `/callback?${oldQuery}`, { cookie: oldState }),
    )
    expect([refused!.status, code(refused)]).toEqual([400, 'state_invalid'])
    expect(() => createOAuthRoutes(options({ cookieSecret: [newer, 'short'] }))).toThrow(
      /cookieSecret 2 of 2 must be at least 16/,
    )
    expect(() => createOAuthRoutes(options({ cookieSecret: [newer, 5] as never }))).toThrow(
      /list with something else/,
    )
  })

  it('access_denied says what the server said, escaped and capped, and never that the user declined', async () => {
    const routes = createOAuthRoutes(options())
    const said = 'no scope was granted'
    const json = await callbackWith(
      routes,
      (state) => `error=access_denied&error_description=${encodeURIComponent(said)}&state=${state}`,
    )
    expect([json!.status, code(json)]).toEqual([403, 'access_denied'])
    const message = JSON.parse(json!.body).error.message as string
    expect(message).toContain(`"${said}"`)
    expect(message).not.toMatch(/declin/i)
    const hostile = `<script>alert(1)</script>\r\n\u202e"${'x'.repeat(5000)}`
    const page = await callbackWith(
      routes,
      (state) =>
        `error=access_denied&error_description=${encodeURIComponent(hostile)}&state=${state}`,
      'text/html',
    )
    expect(page!.status).toBe(403)
    expect(page!.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(page!.body).not.toContain('<script>')
    expect(page!.body).not.toMatch(/[\r\u202e]/)
    expect(page!.body).not.toContain('x'.repeat(201))
    const bare = await callbackWith(routes, (state) => `error=access_denied&state=${state}`)
    expect(JSON.parse(bare!.body).error.message).not.toMatch(/said|declin/i)
  })

  it("a refusal on a callback that is not this browser's sign-in shows none of its text", async () => {
    const routes = createOAuthRoutes(options())
    const forged = await routes.handle(
      request('GET', '/callback?error=access_denied&error_description=Call+support+at+555&state=x'),
    )
    expect([forged!.status, code(forged)]).toEqual([400, 'state_missing'])
    expect(forged!.body).not.toContain('555')
  })

  it('RFC 9207: a callback whose iss is not the authorization server is refused, nothing stored', async () => {
    const tokenStore = new MemoryTokenStore()
    const reported: OAuthFlowError[] = []
    const routes = createOAuthRoutes(
      options({ tokenStore, onError: (error) => void reported.push(error) }),
    )
    const withIss = (iss: string) =>
      callbackWith(
        routes,
        (state) =>
          `code=${server.issueCode('acct_1', redirectUri)}&state=${state}&iss=${encodeURIComponent(iss)}`,
      )
    for (const evil of [
      'https://evil.test',
      `${server.url}/x`,
      server.url.replace('127.0.0.1', 'localhost'),
      '',
    ]) {
      const answer = await withIss(evil)
      expect([answer!.status, code(answer)], evil).toEqual([400, 'issuer_mismatch'])
    }
    expect(await tokenStore.get('acct_1')).toBeUndefined()
    expect(String(reported[0]?.cause)).toContain('https://evil.test')
    // An error callback from the wrong server is refused for the same reason.
    const error = await callbackWith(
      routes,
      (state) => `error=access_denied&state=${state}&iss=https%3A%2F%2Fevil.test`,
    )
    expect(code(error)).toBe('issuer_mismatch')
    for (const good of [server.url, `${server.url}/`]) {
      expect((await withIss(good))!.status, good).toBe(302)
    }
    // Without iss, as before.
    expect((await signIn(routes))!.status).toBe(302)
  })

  it('property: any iss but the issuer itself, or iss sent twice, is refused before the code is exchanged', async () => {
    const routes = createOAuthRoutes(options())
    const exchanges = server.tokenRequests.length
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 60 }),
          fc.constantFrom(
            server.url.toUpperCase(),
            `${server.url}//`,
            ` ${server.url}`,
            `${server.url}%2F`,
            server.url.replace('http:', 'https:'),
            `${server.url}?x`,
            `${server.url}#`,
          ),
          fc.constant([server.url, 'https://evil.test']),
          fc.constant(['https://evil.test', server.url]),
        ),
        async (iss) => {
          fc.pre(iss !== server.url && iss !== `${server.url}/`)
          const all: readonly string[] = Array.isArray(iss) ? iss : [iss as string]
          const query = all.map((one) => `&iss=${encodeURIComponent(one)}`).join('')
          const answer = await callbackWith(routes, (state) => `code=c&state=${state}${query}`)
          expect([answer!.status, code(answer)]).toEqual([400, 'issuer_mismatch'])
        },
      ),
      { numRuns: 150 },
    )
    expect(server.tokenRequests.length).toBe(exchanges)
  })

  it('property: whatever error_description says, the answer holds it only as capped printable ASCII, escaped in the page', async () => {
    const routes = createOAuthRoutes(options())
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.stringMatching(/^[<>&"'\\\r\n\u202e a-z]{0,300}$/),
        ),
        fc.constantFrom('access_denied', 'server_error'),
        async (description, error) => {
          const query = (state: string) =>
            `error=${error}&error_description=${encodeURIComponent(description)}&state=${state}`
          const json = await callbackWith(routes, query)
          const message = JSON.parse(json!.body).error.message as string
          const said = /It said: "(.*)"\. Nothing was stored\.$/.exec(message)?.[1] ?? ''
          expect(said.length).toBeLessThanOrEqual(200)
          expect(said).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e…]*$/)
          const page = (await callbackWith(routes, query, 'text/html'))!.body
          const shown = /<p>(.*?)<\/p>/.exec(page)![1]!
          expect(shown).not.toMatch(/[<>"]/)
        },
      ),
      { numRuns: 100 },
    )
  })

  it('the issuer option replaces authUrl as the iss a callback must carry', async () => {
    const routes = createOAuthRoutes(options({ issuer: 'https://issuer.example.test' }))
    const carrying = (iss: string) =>
      callbackWith(
        routes,
        (state) =>
          `code=${server.issueCode('acct_1', redirectUri)}&state=${state}&iss=${encodeURIComponent(iss)}`,
      )
    expect((await carrying('https://issuer.example.test'))!.status).toBe(302)
    expect(code(await carrying(server.url))).toBe('issuer_mismatch')
    expect(code(await carrying('https://issuer.example.test/'))).toBe('issuer_mismatch')
    expect(() => createOAuthRoutes(options({ issuer: 'issuer.example.test' }))).toThrow(/issuer/)
  })

  it('the exchange failure names its OAuth error code, or the status when there is none', async () => {
    const messageOf = async (routes: OAuthRoutes<{ user: string }>) => {
      const answer = await signIn(routes)
      expect(code(answer)).toBe('token_exchange_failed')
      return JSON.parse(answer!.body).error.message as string
    }
    expect(await messageOf(createOAuthRoutes(options({ clientSecret: 'wrong' })))).toMatch(
      /\(invalid_client\)\.$/,
    )
    const routes = createOAuthRoutes(options())
    const used = server.issueCode('acct_1', redirectUri)
    await routes.oauth.exchangeCode(used)
    const reused = await callbackWith(routes, (state) => `code=${used}&state=${state}`)
    expect(JSON.parse(reused!.body).error.message).toMatch(/\(invalid_grant\)\.$/)
    const gateway = createOAuthRoutes(
      options({ fetch: async () => new Response('<h1>Bad gateway</h1>', { status: 502 }) }),
    )
    expect(await messageOf(gateway)).toMatch(/\(HTTP 502, no OAuth error code\)\.$/)
  })

  it('route_method_not_allowed, with Allow, for another method than the route’s', async () => {
    const routes = createOAuthRoutes(options())
    const answer = await routes.handle(request('HEAD', '/callback'))
    expect([answer!.status, code(answer), answer!.headers.allow]).toEqual([
      405,
      'route_method_not_allowed',
      'GET',
    ])
    const error = new OAuthFlowError('route_method_not_allowed', 'x')
    expect(isOAuthFlowError(error, 'route_method_not_allowed')).toBe(true)
    expect(isWebhookError(error)).toBe(false)
  })
})
