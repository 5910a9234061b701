// The OAuth routes (through the Express adapter) and the token manager against panva's
// oidc-provider 8, a certified OAuth 2.0 server, set up as the scheduling service's
// authorization server: authorize at /oauth/authorize, token at /oauth/token,
// client_secret_post, 7200 s access tokens, a refresh token with every grant (as the service
// gives), rotated on every use, PKCE (S256) required on every authorization request. Its
// default policy otherwise: no grant without a scope.
// Login and consent are its own development pages, filled in by a scripted browser.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cookieHeader } from '@scheduling-kit/conformance'
import {
  createSchedulingClient,
  createTokenManager,
  type Logger,
  MemoryTokenStore,
  OAuthError,
  type OAuthFlowError,
  type OAuthRoutesOptions,
  ReauthorizationRequiredError,
} from '@scheduling-kit/core'
import { schedulingOAuth } from '@scheduling-kit/express'
import express, { type Request } from 'express'
import Provider, { type Configuration } from 'oidc-provider'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

const CLIENT_ID = 'interop-app'
const CLIENT_SECRET = 'interop-client-secret-0123456789'
const COOKIE_SECRET = 'interop-cookie-secret-0123456789abcdef'
const SCOPE = ['schedule:read', 'schedule:write']

type Handler = (req: IncomingMessage, res: ServerResponse) => void

async function listen(handler: Handler): Promise<{ server: Server; url: string }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

let provider: Provider
let issuer: string
let appBase: string
let redirectUri: string
let servers: Server[] = []
/** The app the app server answers with: each test builds its own. */
let currentApp: Handler = (_req, res) => res.writeHead(503).end()
/** What the token endpoint did: `grant_type` of each success, OAuth error of each failure. */
const grants: string[] = []
const grantErrors: string[] = []

beforeAll(async () => {
  const app = await listen((req, res) => currentApp(req, res))
  appBase = app.url
  redirectUri = `${appBase}/auth/scheduling/callback`
  let answer: Handler = (_req, res) => res.writeHead(503).end()
  const auth = await listen((req, res) => answer(req, res))
  servers = [app.server, auth.server]
  issuer = auth.url
  const configuration: Configuration = {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    routes: { authorization: '/oauth/authorize', token: '/oauth/token' },
    scopes: SCOPE,
    pkce: { methods: ['S256'], required: () => true },
    rotateRefreshToken: true,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: 7200,
      AuthorizationCode: 60,
      RefreshToken: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
      Interaction: 600,
      Session: 3600,
    },
    cookies: { keys: ['interop-provider-cookie-key'] },
    findAccount: async (_ctx, accountId) => ({
      accountId,
      claims: async () => ({ sub: accountId }),
    }),
  }
  provider = new Provider(issuer, configuration)
  provider.on('grant.success', (ctx) => void grants.push(String(ctx.oidc.params?.grant_type)))
  provider.on('grant.error', (_ctx, error) => void grantErrors.push(String(error.error)))
  const oidc = provider.callback()
  // The API beside it: GET /v1/me answers for a live access token of this server.
  answer = (req, res) => {
    if (new URL(req.url ?? '/', issuer).pathname !== '/v1/me') return void oidc(req, res)
    const token = /^bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]
    void (token ? provider.AccessToken.find(token) : Promise.resolve(undefined)).then((found) => {
      if (found === undefined) return void res.writeHead(401).end()
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: found.accountId, scope: found.scope }))
    })
  }
})

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

beforeEach(() => {
  grants.length = 0
  grantErrors.length = 0
})

/** A logger that keeps its lines. */
function capture(): Logger & { lines: string[] } {
  const lines: string[] = []
  const keep = (message: string) => void lines.push(message)
  return { lines, debug: keep, info: keep, warn: keep, error: keep }
}

/** An Express app with the routes mounted where `redirectUri` says, serving from now on. */
function startApp(options: Partial<OAuthRoutesOptions<Request>> = {}) {
  const tokenStore = new MemoryTokenStore()
  const errors: OAuthFlowError[] = []
  const logger = capture()
  const uri = options.redirectUri ?? redirectUri
  const mount = new URL(uri).pathname.replace(/\/callback$/, '')
  const middleware = schedulingOAuth({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: uri,
    authUrl: issuer,
    apiUrl: `${issuer}/v1`,
    tokenStore,
    cookieSecret: COOKIE_SECRET,
    scope: SCOPE,
    successRedirect: '/connected',
    showCauses: true,
    logger,
    onError: (error) => void errors.push(error),
    ...options,
  })
  const app = express()
  app.use(mount, middleware)
  currentApp = app as unknown as Handler
  return { tokenStore, errors, logger, oauth: middleware.routes.oauth, mount }
}
type App = ReturnType<typeof startApp>

/** Cookies by name and path, as a browser keeps them for one host. */
class Jar {
  readonly #cookies = new Map<string, { name: string; value: string; path: string }>()

  take(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(pair.indexOf('=') + 1)
      let path = '/'
      let gone = false
      for (const attribute of attributes) {
        const [key = '', setting = ''] = attribute.split('=')
        if (key.toLowerCase() === 'path') path = setting
        if (key.toLowerCase() === 'max-age' && Number(setting) <= 0) gone = true
        if (key.toLowerCase() === 'expires' && Date.parse(setting) < Date.now()) gone = true
      }
      if (gone) this.#cookies.delete(`${name};${path}`)
      else this.#cookies.set(`${name};${path}`, { name, value, path })
    }
  }

  header(url: URL): string {
    return [...this.#cookies.values()]
      .filter((cookie) => url.pathname.startsWith(cookie.path))
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join('; ')
  }
}

interface Visit {
  /** The app's sign-in cookie, from `/login`. */
  appCookie: string
  /** Where the server sent the browser back to the app, when it did. */
  callback?: URL
  /** The server's own page the browser stopped at, when it did not. */
  stoppedAt?: { status: number; text: string }
}

/**
 * A browser: the app's `/login`, then the server's login page (any account, any password) and
 * consent page, Allow or Cancel, until the server sends it back to the app's callback.
 */
async function signIn(app: App, decision: 'allow' | 'deny' = 'allow', account = 'acct_1') {
  const login = await fetch(`${appBase}${app.mount}/login`, { redirect: 'manual' })
  expect(login.status).toBe(302)
  const appCookie = cookieHeader(login.headers)
  const jar = new Jar()
  let url = new URL(login.headers.get('location')!)
  let form: URLSearchParams | undefined
  for (let step = 0; step < 20; step++) {
    if (url.origin === appBase) return { appCookie, callback: url } satisfies Visit
    const answer = await fetch(url, {
      method: form ? 'POST' : 'GET',
      body: form,
      redirect: 'manual',
      headers: { cookie: jar.header(url) },
    })
    jar.take(answer.headers)
    form = undefined
    const location = answer.headers.get('location')
    if (location !== null) {
      url = new URL(location, url)
      continue
    }
    const text = await answer.text()
    const prompt = /name="prompt" value="(\w+)"/.exec(text)?.[1]
    if (answer.status !== 200 || prompt === undefined) {
      return { appCookie, stoppedAt: { status: answer.status, text } } satisfies Visit
    }
    if (prompt === 'consent' && decision === 'deny') {
      url = new URL(/href="([^"]+\/abort)"/.exec(text)![1]!, url)
      continue
    }
    url = new URL(/<form[^>]* action="([^"]+)"/.exec(text)![1]!, url)
    form = new URLSearchParams(
      prompt === 'login' ? { prompt, login: account, password: 'any password' } : { prompt },
    )
  }
  throw new Error('the sign-in went round in circles')
}

/** The browser arriving at the app's callback with its sign-in cookie. */
async function arrive(visit: Visit, callback = visit.callback!, accept = 'application/json') {
  const answer = await fetch(callback, {
    redirect: 'manual',
    headers: { cookie: visit.appCookie, accept },
  })
  const text = await answer.text()
  const json = accept.includes('json') && text !== '' ? JSON.parse(text) : undefined
  return { status: answer.status, headers: answer.headers, text, json }
}

/** A whole connection of `account`, checked to have worked. */
async function connect(app: App, account = 'acct_1') {
  const visit = await signIn(app, 'allow', account)
  const back = await arrive(visit)
  expect(back.status, back.text).toBe(302)
  const record = await app.tokenStore.get(account)
  expect(record).toBeDefined()
  return { visit, record: record! }
}

const meWith = (token: string) =>
  createSchedulingClient({ baseUrl: `${issuer}/v1`, token }).me<{ id: string; scope: string }>()

describe('the OAuth routes against oidc-provider 8', () => {
  it('connect: iss checked, the tokens and their granted scope stored, GET /me with them', async () => {
    const app = startApp()
    const before = Date.now()
    const { visit, record } = await connect(app)
    expect(visit.callback!.searchParams.get('iss')).toBe(issuer)
    expect(grants).toEqual(['authorization_code'])
    expect(record).toMatchObject({
      tokenType: 'Bearer',
      account: { id: 'acct_1' },
    })
    expect(record.scope?.split(' ').sort()).toEqual([...SCOPE].sort())
    // Stamped on the server's Date (whole seconds) when it is behind this clock.
    expect(record.expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7200_000)
    expect(record.expiresAt).toBeLessThanOrEqual(Date.now() + 7200_000)
    expect(await meWith(record.accessToken)).toMatchObject({ id: 'acct_1' })
  })

  it('refresh storm: 200 callers on four managers, one refresh, a rotated refresh token; a replay of the old one revokes the grant and every caller is told to reauthorize', async () => {
    const app = startApp()
    const { record } = await connect(app)
    grants.length = 0
    await app.tokenStore.set('acct_1', { ...record, expiresAt: Date.now() - 1000 })
    // Four managers over one store, as four instances would be, 50 callers each.
    const managers = Array.from({ length: 4 }, () =>
      createTokenManager({ oauth: app.oauth, store: app.tokenStore, invalidGrantWaitMs: 300 }),
    )
    const manager = managers[0]!
    const tokens = await Promise.all(
      Array.from({ length: 200 }, (_, i) => managers[i % 4]!.getAccessToken('acct_1')),
    )
    expect(new Set(tokens).size).toBe(1)
    expect(tokens[0]).not.toBe(record.accessToken)
    expect(grants).toEqual(['refresh_token'])
    const refreshed = (await app.tokenStore.get('acct_1'))!
    expect(refreshed.refreshToken).not.toBe(record.refreshToken)
    expect(refreshed.scope).toBe(record.scope)
    const api = createSchedulingClient({
      baseUrl: `${issuer}/v1`,
      token: { manager, key: 'acct_1' },
    })
    expect(await api.me()).toMatchObject({ id: 'acct_1' })

    // The spent refresh token, replayed: the server refuses it and revokes the whole grant.
    const replay = await app.oauth.refresh(record.refreshToken).catch((error: unknown) => error)
    expect(replay).toBeInstanceOf(OAuthError)
    expect(replay).toMatchObject({ error: 'invalid_grant' })
    await expect(meWith(refreshed.accessToken)).rejects.toMatchObject({ status: 401 })

    grants.length = 0
    grantErrors.length = 0
    // The manager still holds the revoked access token in memory (it is not due for a refresh):
    // the API refuses it, and each of 50 callers says so, as the API client does on a 401.
    expect(await manager.getAccessToken('acct_1')).toBe(refreshed.accessToken)
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, () =>
        manager.getAccessToken('acct_1', { rejectedToken: refreshed.accessToken }),
      ),
    )
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected')
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(ReauthorizationRequiredError)
    }
    expect(grantErrors).toEqual(['invalid_grant'])
    expect((await app.tokenStore.get('acct_1'))?.reauthorizationRequired).toBe(true)
    await expect(manager.getAccessToken('acct_1')).rejects.toBeInstanceOf(
      ReauthorizationRequiredError,
    )
    expect(grantErrors).toHaveLength(1)
  })

  it('a wrong client secret: 502 naming invalid_client in the message and the log, never the secret', async () => {
    const app = startApp({ clientSecret: 'not-the-client-secret-0000' })
    const back = await arrive(await signIn(app))
    expect(back.status).toBe(502)
    expect(back.json.error.code).toBe('token_exchange_failed')
    expect(back.json.error.message).toContain('(invalid_client)')
    expect(back.json.error.cause).toMatch(/Check clientId and clientSecret/)
    expect(grantErrors).toEqual(['invalid_client'])
    const logged = app.logger.lines.join('\n')
    expect(logged).toContain('invalid_client')
    for (const text of [back.text, logged]) {
      expect(text).not.toContain('not-the-client-secret-0000')
      expect(text).not.toContain(CLIENT_SECRET)
    }
    expect(await app.tokenStore.get('acct_1')).toBeUndefined()
  })

  it('a redirect URI the server does not know: it stops on its own page and never sends the browser back', async () => {
    const app = startApp({ redirectUri: `${appBase}/auth/elsewhere/callback` })
    const visit = await signIn(app)
    expect(visit.callback).toBeUndefined()
    expect(visit.stoppedAt?.status).toBe(400)
    expect(visit.stoppedAt?.text).toContain('redirect_uri')
    expect([...grants, ...grantErrors]).toEqual([])
  })
})

describe('the OAuth routes against oidc-provider 8: codes, consent, scope and issuer', () => {
  it('a code used twice: the second exchange is refused with invalid_grant, named, and nothing is stored', async () => {
    const app = startApp()
    const first = await connect(app)
    const usedCode = first.visit.callback!.searchParams.get('code')!
    await app.tokenStore.delete('acct_1')
    // A new sign-in of this browser, presenting the spent code.
    const again = await signIn(app)
    const forged = new URL(again.callback!)
    forged.searchParams.set('code', usedCode)
    const back = await arrive(again, forged)
    expect(back.status).toBe(502)
    expect(back.json.error.code).toBe('token_exchange_failed')
    expect(back.json.error.message).toContain('(invalid_grant)')
    expect(back.json.error.cause).toMatch(/already used or has expired/)
    expect(grantErrors).toEqual(['invalid_grant'])
    expect(await app.tokenStore.get('acct_1')).toBeUndefined()
    // The new sign-in's PKCE verifier is not the code's: the server refuses the exchange on that
    // proof, before it would treat it as the code's reuse, so the first grant stands.
    expect((await meWith(first.record.accessToken)).id).toBe('acct_1')
  })

  it("PKCE: the server gets an S256 challenge; a victim's leaked code in the attacker's own sign-in is refused, nothing stored", async () => {
    const app = startApp()
    // The victim's sign-in: the server sends the code back, and it leaks before it is used.
    const victim = await signIn(app, 'allow', 'acct_victim')
    const code = victim.callback!.searchParams.get('code')!
    // The attacker's own sign-in (its browser, its state and verifier), with the victim's code.
    const attacker = await signIn(app, 'allow', 'acct_attacker')
    const injected = new URL(attacker.callback!)
    injected.searchParams.set('code', code)
    const back = await arrive(attacker, injected)
    expect(back.status).toBe(502)
    expect(back.json.error.code).toBe('token_exchange_failed')
    expect(back.json.error.message).toContain('(invalid_grant)')
    expect(grantErrors).toEqual(['invalid_grant'])
    expect(await app.tokenStore.get('acct_victim')).toBeUndefined()
    expect(await app.tokenStore.get('acct_attacker')).toBeUndefined()
    // The server requires PKCE: with it turned off, no sign-in gets a code.
    const off = startApp({ pkce: false })
    const refused = await signIn(off)
    const error = refused.callback?.searchParams.get('error') ?? refused.stoppedAt?.text ?? ''
    expect(error).toMatch(/invalid_request|code_challenge/)
    expect(refused.callback?.searchParams.has('code') ?? false).toBe(false)
  })

  it("denied consent: 403 access_denied with the server's words, never claiming more", async () => {
    const app = startApp()
    const visit = await signIn(app, 'deny')
    expect(visit.callback!.searchParams.get('error')).toBe('access_denied')
    const page = await arrive(visit, visit.callback, 'text/html')
    expect(page.status).toBe(403)
    expect(page.text).toContain('End-User aborted interaction')
    expect(page.text).not.toMatch(/declined/i)
    expect(app.errors.map((error) => error.code)).toEqual(['access_denied'])
    expect(await app.tokenStore.get('acct_1')).toBeUndefined()
    expect(grants).toEqual([])
  })

  it('a server that requires a scope: without the scope option, access_denied with its reason; with it, connected', async () => {
    const bare = startApp({ scope: undefined })
    const visit = await signIn(bare)
    const authorize = new URL(bare.oauth.authorizeUrl({ state: 's' }))
    expect(authorize.searchParams.has('scope')).toBe(false)
    // The user logged in; the server refused anyway, and said no more than access_denied.
    expect(visit.callback!.searchParams.get('error')).toBe('access_denied')
    const back = await arrive(visit)
    expect(back.status).toBe(403)
    expect(back.json.error.code).toBe('access_denied')
    expect(back.json.error.message).not.toMatch(/declin|said/i)
    expect(back.json.error.cause).toMatch(/set the scope option/)
    expect(await bare.tokenStore.get('acct_1')).toBeUndefined()
    const scoped = startApp({ scope: SCOPE.join(' ') })
    expect((await connect(scoped)).record.scope).toBeDefined()
  })

  it("RFC 9207: the server's iss is accepted; a callback carrying another server's iss is refused", async () => {
    const app = startApp()
    const visit = await signIn(app)
    const mixedUp = new URL(visit.callback!)
    mixedUp.searchParams.set('iss', 'https://attacker.example.test')
    const refused = await arrive(visit, mixedUp)
    expect(refused.status).toBe(400)
    expect(refused.json.error.code).toBe('issuer_mismatch')
    expect(grants).toEqual([])
    expect(await app.tokenStore.get('acct_1')).toBeUndefined()
    // The real callback of the same sign-in still works: the mismatch spent nothing.
    expect((await arrive(visit)).status).toBe(302)
    expect(grants).toEqual(['authorization_code'])
  })
})
