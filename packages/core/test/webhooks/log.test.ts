import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { ConfigError } from '../../src/errors/errors.js'
import type { Logger } from '../../src/log.js'
import type { OAuthRoutesOptions } from '../../src/oauth/options.js'
import { createOAuthRoutes, type OAuthRoutes } from '../../src/oauth/routes.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import type { WebhookHandler } from '../../src/webhooks/contract.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { envelope, secretText, sign } from '../helpers.js'

interface Line {
  level: keyof Logger
  message: string
}

/** A logger that keeps every line, as a test reads them. */
function capture(): Logger & { lines: Line[]; at(level: keyof Logger): string[] } {
  const lines: Line[] = []
  const at = (level: keyof Logger) => (message: string) => void lines.push({ level, message })
  return {
    lines,
    at: (level) => lines.filter((l) => l.level === level).map((l) => l.message),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
}

const SECRET = 'whsec_0123456789abcdefghij'

function post(
  handler: WebhookHandler,
  body: string | object,
  headers: Record<string, string> = {},
) {
  return handler.handle({
    method: 'POST',
    path: '/webhooks/scheduling',
    headers: { 'content-type': 'application/json', ...headers },
    body: body as string,
  })
}

function signed(handler: WebhookHandler, secret = SECRET, event = envelope()) {
  const body = JSON.stringify(event)
  return post(handler, body, { 'x-service-signature': sign(body, secret) })
}

afterEach(() => {
  vi.useRealTimers()
})

describe('webhook logging', () => {
  it('a throwing handler is logged at error with its stack, the event and the webhook id', async () => {
    const logger = capture()
    const handler = createWebhookHandler(SECRET, { logger }).on('event.created', () => {
      throw new Error('DB is down')
    })
    const event = envelope('event.created')
    const body = JSON.stringify(event)
    const answer = await post(handler, body, {
      'x-service-signature': sign(body, SECRET),
      'x-service-webhook-id': 'wh_42',
    })
    expect(answer?.status).toBe(500)
    const [line, ...more] = logger.at('error')
    expect(more).toEqual([])
    expect(line).toContain('500 handler_failed (webhook wh_42)')
    expect(line).toContain(event.id)
    expect(line).toContain('Error: DB is down')
    expect(line).toMatch(/\n\s+at .*log\.test\.ts/)
    // The answer to the sender stays generic.
    expect(answer?.body).not.toContain('DB is down')
  })

  it('a failing dedupe store after verification is logged each time, with what it threw', async () => {
    const logger = capture()
    const dedupe = new MemoryDedupeStore()
    dedupe.claim = (() => Promise.reject(new Error('redis: connection lost'))) as never
    const handler = createWebhookHandler({ secret: SECRET, logger, dedupe })
    for (let i = 0; i < 3; i++) expect((await signed(handler))?.status).toBe(500)
    const errors = logger.at('error')
    expect(errors).toHaveLength(3)
    expect(errors[0]).toContain('the dedupe store failed')
    expect(errors[0]).toContain('redis: connection lost')
  })

  it('forged signatures: the first in full, then one count a minute, whatever the rate', async () => {
    vi.useFakeTimers()
    const logger = capture()
    const handler = createWebhookHandler({ secret: SECRET, logger })
    for (let i = 0; i < 500; i++) expect((await signed(handler, 'wrong-secret'))?.status).toBe(401)
    expect(logger.lines).toHaveLength(1)
    expect(logger.lines[0]!.level).toBe('warn')
    expect(logger.lines[0]!.message).toContain('401 signature_invalid')
    vi.advanceTimersByTime(60_000)
    expect(logger.lines).toHaveLength(2)
    expect(logger.lines[1]!.message).toContain(
      '499 more webhook request(s) answered 401 signature_invalid',
    )
    // A quiet minute closes the window: the next one is told in full again.
    vi.advanceTimersByTime(60_000)
    await signed(handler, 'wrong-secret')
    expect(logger.lines).toHaveLength(3)
    expect(logger.lines[2]!.message).toContain('Check that the secret')
  })

  it('body_parsed and secret_whitespace are told once per cause, not per request', async () => {
    const logger = capture()
    const handler = createWebhookHandler({ secret: `${SECRET}\n`, logger })
    for (let i = 0; i < 5; i++) {
      expect((await signed(handler, SECRET))?.status).toBe(401)
      expect(
        (await post(handler, { already: 'parsed' }, { 'x-service-signature': 'sha256=00' }))
          ?.status,
      ).toBe(500)
    }
    const warnings = logger.at('warn')
    expect(warnings).toHaveLength(2)
    expect(warnings.some((w) => w.includes('secret_whitespace'))).toBe(true)
    expect(warnings.some((w) => w.includes('body_parsed'))).toBe(true)
    expect(logger.at('error')).toEqual([])
  })

  it('an in-memory dedupe store forgetting ids early is told at warn', async () => {
    const logger = capture()
    const handler = createWebhookHandler({
      secret: SECRET,
      logger,
      dedupe: new MemoryDedupeStore({ maxEntries: 2 }),
    })
    for (let i = 0; i < 4; i++) expect((await signed(handler))?.status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(logger.at('warn').join('\n')).toMatch(/dedupe store is full/)
  })

  it('a body stream already read answers body_parsed with the fix, not handler_failed', async () => {
    const logger = capture()
    const handler = createWebhookHandler({ secret: SECRET, logger })
    const body = JSON.stringify(envelope())
    const request = new Request('http://app.test/webhooks/scheduling', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
      body,
    })
    await request.text()
    const answer = await handler.fetch(request)
    expect(answer.status).toBe(500)
    const error = ((await answer.json()) as { error: { code: string; message: string } }).error
    expect(error.code).toBe('body_parsed')
    expect(error.message).toMatch(/already read/)
    expect(error.message).toMatch(/c\.req\.raw/)
    // A locked stream (a reader holds it) is the same mistake.
    const locked = new Request('http://app.test/webhooks/scheduling', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
      body,
    })
    locked.body!.getReader()
    expect(
      ((await (await handler.fetch(locked)).json()) as { error: { code: string } }).error.code,
    ).toBe('body_parsed')
  })

  it('a webhook id header of the sender’s choosing is capped and cleaned in the log line', async () => {
    const logger = capture()
    const handler = createWebhookHandler({ secret: SECRET, logger }).onAny(() => {
      throw new Error('down')
    })
    const body = JSON.stringify(envelope())
    const id = `wh_${'x'.repeat(5000)}\u001b[31mforged`
    await post(handler, body, {
      'x-service-signature': sign(body, SECRET),
      'x-service-webhook-id': id,
    })
    const [line] = logger.at('error')
    expect(line!.split('\n')[0]!.length).toBeLessThan(400)
    expect(line).not.toContain('\u001b')
  })

  it('a logger that throws does not change the answer', async () => {
    const throwing: Logger = {
      debug() {},
      info() {},
      warn() {
        throw new Error('log down')
      },
      error() {
        throw new Error('log down')
      },
    }
    const handler = createWebhookHandler(SECRET, { logger: throwing }).onAny(() => {
      throw new Error('handler down')
    })
    expect((await signed(handler))?.status).toBe(500)
    expect((await signed(handler, 'wrong'))?.status).toBe(401)
  })
})

describe('webhook options', () => {
  it('an undefined secret gets the same help as an empty one, and says what it was', () => {
    const message = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('no error')
    }
    const empty = message(() => createWebhookHandler(''))
    const missing = message(() => createWebhookHandler(undefined as unknown as string))
    const inOptions = message(() =>
      createWebhookHandler({ secret: undefined as unknown as string }),
    )
    expect(empty).toMatch(/no signing secret was given/)
    expect(missing).toMatch(
      /no signing secret was given \(it is undefined: is the environment variable set/,
    )
    expect(inOptions).toBe(missing)
    expect(missing.replace(/ \(it is undefined[^)]*\)/, '')).toBe(empty)
  })

  it('takes (secret, options); refuses a secret given twice and options given twice', async () => {
    const handler = createWebhookHandler(SECRET, { path: '/hooks' })
    expect(handler.path).toBe('/hooks')
    expect(() => createWebhookHandler(SECRET, { secret: 'x' } as never)).toThrow(/given twice/)
    expect(() => createWebhookHandler({ secret: SECRET }, { path: '/x' })).toThrow(/given twice/)
    expect(() => createWebhookHandler(SECRET, 'x' as never)).toThrow(/options object/)
  })

  it('refuses a logger without the four methods, naming what is missing', () => {
    expect(() => createWebhookHandler(SECRET, { logger: { warn() {} } as never })).toThrow(
      /it has no debug, info, error/,
    )
  })
})

describe('OAuth logging and causes', () => {
  const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
  let server: TokenServer
  beforeAll(async () => {
    server = await startTokenServer({ redirectUri })
  })
  afterAll(() => server.close())

  const options = (extra: Partial<OAuthRoutesOptions<null>> = {}): OAuthRoutesOptions<null> => ({
    clientId: 'client-123',
    clientSecret: 'client-secret-xyz',
    redirectUri,
    authUrl: server.url,
    tokenStore: new MemoryTokenStore(),
    cookieSecret: 'c'.repeat(32),
    ...extra,
  })
  const request = (path: string, headers: Record<string, string> = {}) => ({
    method: 'GET',
    path,
    headers: { host: '127.0.0.1:9', ...headers },
    mountPath: '/auth/scheduling',
    raw: null,
  })

  async function signIn(routes: OAuthRoutes<null>, headers: Record<string, string> = {}) {
    const login = await routes.handle(request('/login'))
    const cookie = String(login!.headers['set-cookie']).split(';')[0]!
    const state = new URL(String(login!.headers.location)).searchParams.get('state')!
    const code = server.issueCode('acct_1', redirectUri)
    return routes.handle(request(`/callback?code=${code}&state=${state}`, { cookie, ...headers }))
  }

  it('a wrong client secret: logged with invalid_client and the fix; the page names it outside production', async () => {
    const logger = capture()
    const routes = createOAuthRoutes(
      options({ clientSecret: 'wrong-client-secret', logger, showCauses: true }),
    )
    const answer = await signIn(routes)
    expect(answer?.status).toBe(502)
    expect(answer?.body).toContain('(invalid_client)')
    expect(answer?.body).toMatch(/id="cause".*Check clientId and clientSecret/)
    const [line] = logger.at('error')
    expect(line).toContain('token_exchange_failed')
    expect(line).toContain('answered 401 invalid_client')
    expect(line).not.toContain('wrong-client-secret')
    // In production the page keeps the cause to itself; the log still has it.
    const quiet = createOAuthRoutes(
      options({ clientSecret: 'wrong-client-secret', logger, showCauses: false }),
    )
    const page = await signIn(quiet)
    expect(page?.body).not.toContain('id="cause"')
    expect(logger.at('error')).toHaveLength(2)
  })

  it('showCauses follows NODE_ENV by default: only development and test show causes; unset is production', async () => {
    const before = process.env.NODE_ENV
    try {
      for (const [mode, shown] of [
        ['production', false],
        [undefined, false],
        ['', false],
        ['staging', false],
        ['development', true],
        ['test', true],
      ] as const) {
        if (mode === undefined) delete process.env.NODE_ENV
        else process.env.NODE_ENV = mode
        const routes = createOAuthRoutes(options({ clientSecret: 'nope', logger: capture() }))
        const body = (await signIn(routes))?.body ?? ''
        expect(body.includes('id="cause"'), String(mode)).toBe(shown)
        // The internal address the cause would name never reaches a production page.
        if (!shown) expect(body, String(mode)).not.toContain('127.0.0.1')
      }
    } finally {
      process.env.NODE_ENV = before
    }
  })

  it('showCauses is off by default where the environment is missing or cannot be read', async () => {
    // workerd without nodejs_compat has no process; Deno without --allow-env throws on reading
    // process.env. Neither may turn a production Worker or server into development mode.
    const env = Object.getOwnPropertyDescriptor(process, 'env')!
    const processProperty = Object.getOwnPropertyDescriptor(globalThis, 'process')!
    let refused: OAuthRoutes
    let absent: OAuthRoutes
    try {
      Object.defineProperty(process, 'env', {
        configurable: true,
        get() {
          throw new Error('NotCapable: Requires env access to "NODE_ENV"')
        },
      })
      refused = createOAuthRoutes(options({ clientSecret: 'nope', logger: capture() }))
    } finally {
      Object.defineProperty(process, 'env', env)
    }
    try {
      Object.defineProperty(globalThis, 'process', { configurable: true, value: undefined })
      absent = createOAuthRoutes(options({ clientSecret: 'nope', logger: capture() }))
    } finally {
      Object.defineProperty(globalThis, 'process', processProperty)
    }
    expect((await signIn(refused))?.body).not.toContain('id="cause"')
    expect((await signIn(absent))?.body).not.toContain('id="cause"')
  })

  it('a failing GET /me is logged with its status and address', async () => {
    const logger = capture()
    const routes = createOAuthRoutes(options({ apiUrl: `${server.url}/nowhere`, logger }))
    const answer = await signIn(routes)
    expect(answer?.status).toBe(502)
    const [line] = logger.at('error')
    expect(line).toContain('identify_failed')
    expect(line).toContain(`GET /me failed with status 404 (${server.url}/nowhere/me)`)
    expect(line).toContain('Check apiUrl')
  })

  it('an authorization server that does not answer: the address it tried', async () => {
    const logger = capture()
    const closed = await startTokenServer()
    await closed.close()
    const routes = createOAuthRoutes(options({ authUrl: closed.url, logger }))
    const login = await routes.handle(request('/login'))
    const cookie = String(login!.headers['set-cookie']).split(';')[0]!
    const state = new URL(String(login!.headers.location)).searchParams.get('state')!
    await routes.handle(request(`/callback?code=x&state=${state}`, { cookie }))
    expect(logger.at('error')[0]).toContain(
      `no answer from ${closed.url}/oauth/token (ECONNREFUSED)`,
    )
  })

  it('a missing sign-in cookie: the page says which host the redirect URI is on; a login on another loopback host is warned of', async () => {
    const logger = capture()
    const routes = createOAuthRoutes(options({ logger, showCauses: true }))
    await routes.handle(request('/login', { host: 'localhost:9' }))
    expect(logger.at('warn')[0]).toMatch(
      /sign-in started on localhost, but the redirect URI is on 127\.0\.0\.1:/,
    )
    const answer = await routes.handle(request('/callback?code=x&state=y', { host: 'localhost:9' }))
    expect(answer?.status).toBe(400)
    expect(answer?.body).toContain(
      'This callback reached localhost:9, but the redirect URI is on 127.0.0.1:9',
    )
    // Behind a proxy the Host header may be an inner name: no warning for that.
    await routes.handle(request('/login', { host: 'app-internal:8080' }))
    expect(logger.at('warn')).toHaveLength(2) // the login warning and the state_missing line
  })

  it('property: a hostile Host header never breaks /login or a callback, and enters no line or page raw', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (host) => {
        const logger = capture()
        const routes = createOAuthRoutes(options({ logger, showCauses: true }))
        const login = await routes.handle(request('/login', { host }))
        expect(login?.status).toBe(302)
        const answer = await routes.handle(request('/callback?code=x&state=y', { host }))
        expect(answer?.status).toBe(400)
        for (const line of logger.lines.map((l) => l.message)) {
          // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
          expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/)
        }
        expect(answer?.body).not.toMatch(/<script/i)
      }),
      { numRuns: 300 },
    )
  })

  it('forged callbacks are summarised: one line, then a count', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const logger = capture()
    const routes = createOAuthRoutes(options({ logger }))
    for (let i = 0; i < 50; i++) await routes.handle(request('/callback?code=x&state=forged'))
    expect(logger.lines).toHaveLength(1)
    vi.advanceTimersByTime(60_000)
    expect(logger.lines.map((l) => l.message)[1]).toContain(
      '49 more OAuth answer(s) 400 state_missing',
    )
  })
})

describe('no secret or token in any log line', () => {
  let server: TokenServer
  const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
  beforeAll(async () => {
    server = await startTokenServer({ redirectUri })
  })
  afterAll(() => server.close())

  it('property: every failure path, with secrets of any shape', async () => {
    await fc.assert(
      fc.asyncProperty(secretText(), secretText(), async (signingSecret, cookieSecret) => {
        const logger = capture()
        const handler = createWebhookHandler({ secret: `${signingSecret}\n`, logger }).onAny(() => {
          throw new Error('handler down')
        })
        const event = envelope()
        const body = JSON.stringify(event)
        const expected = sign(body, `${signingSecret}\n`)
        // Right secret (handler throws), trimmed secret, wrong secret, parsed body, no signature.
        await post(handler, body, { 'x-service-signature': expected })
        await post(handler, body, { 'x-service-signature': sign(body, signingSecret) })
        await post(handler, body, { 'x-service-signature': sign(body, 'wrong') })
        await post(handler, { parsed: true }, { 'x-service-signature': expected })
        await post(handler, body, {})
        // OAuth: a wrong client secret, then a good exchange whose /me fails.
        const tokenStore = new MemoryTokenStore()
        const bearers: string[] = []
        const fetch = (input: string, init?: RequestInit) => {
          const auth = new Headers(init?.headers).get('authorization')
          if (auth) bearers.push(auth.slice(7))
          return globalThis.fetch(input, init)
        }
        for (const extra of [
          { clientSecret: `${cookieSecret}-client` },
          { apiUrl: `${server.url}/nowhere` },
        ]) {
          const routes = createOAuthRoutes<null>({
            clientId: 'client-123',
            clientSecret: 'client-secret-xyz',
            redirectUri,
            authUrl: server.url,
            tokenStore,
            cookieSecret,
            logger,
            fetch,
            ...extra,
          })
          const login = await routes.handle({
            method: 'GET',
            path: '/login',
            headers: {},
            mountPath: '/auth/scheduling',
            raw: null,
          })
          const cookie = String(login!.headers['set-cookie']).split(';')[0]!
          const state = new URL(String(login!.headers.location)).searchParams.get('state')!
          const code = server.issueCode('acct_1', redirectUri)
          await routes.handle({
            method: 'GET',
            path: `/callback?code=${code}&state=${state}`,
            headers: { cookie },
            mountPath: '/auth/scheduling',
            raw: null,
          })
          expect(logger.lines.length).toBeGreaterThan(0)
          if ('apiUrl' in extra) expect(bearers.length).toBeGreaterThan(0)
          const text = logger.lines.map((l) => l.message).join('\n')
          const grants = server.tokenRequests.map((r) => r.form)
          const secrets = [
            signingSecret,
            cookieSecret,
            `${cookieSecret}-client`,
            'client-secret-xyz',
            expected.slice(7),
            expected.slice(7).toLowerCase(),
            code,
            state,
            cookie.split('=')[1]!,
            ...bearers,
            ...grants.flatMap((g) => [g.code, g.refresh_token].filter((v): v is string => !!v)),
          ]
          for (const secret of secrets) expect(text).not.toContain(secret)
        }
      }),
      { numRuns: 15 },
    )
  })
})
