// Fastify conventions beyond the shared suite: request.log, explicit OAuth routes beside an
// app's own catch-all, the request decorator, and set-up errors as ConfigError.
import {
  cookieHeader,
  deliver,
  envelope,
  freePort,
  request,
  startTokenServer,
  type TokenServer,
} from '@scheduling-kit/conformance'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  createDeliveryLedger,
  isSchedulingError,
  MemoryLedgerStore,
  MemoryTokenStore,
  schedulingOAuth,
  schedulingWebhooks,
} from '../src/index.js'

const SECRET = 'fastify-secret'
let auth: TokenServer
let app: FastifyInstance | undefined
beforeAll(async () => {
  auth = await startTokenServer()
})
afterAll(() => auth.close())
afterEach(async () => {
  vi.restoreAllMocks()
  await app?.close()
  app = undefined
})

const throwing = {
  secret: SECRET,
  on: {
    'event.created': () => {
      throw new Error('DB is down')
    },
  },
} as const

describe('logging through request.log', () => {
  it('a throwing handler is logged at level 50 with its stack and the request id', async () => {
    const lines: Array<Record<string, unknown>> = []
    app = Fastify({
      logger: { stream: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    })
    await app.register(schedulingWebhooks, throwing)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const body = envelope('event.created')
    expect((await deliver(`${base}/webhooks/scheduling`, body, { secret: SECRET })).status).toBe(
      500,
    )
    const line = lines.find((l) => String(l.msg).includes('handler_failed'))
    expect(line).toMatchObject({ level: 50 })
    expect(line?.reqId).toBeDefined()
    expect(String(line?.msg)).toContain('Error: DB is down')
    expect(String(line?.msg)).toMatch(/\n\s+at .*fastify\.test\.ts/)
  })

  it('with Fastify’s logger off, the failure still reaches the console', async () => {
    const printed: string[] = []
    vi.spyOn(console, 'error').mockImplementation((m) => void printed.push(String(m)))
    app = Fastify()
    await app.register(schedulingWebhooks, throwing)
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    expect(
      (await deliver(`${base}/webhooks/scheduling`, envelope(), { secret: SECRET })).status,
    ).toBe(500)
    expect(printed.join('\n')).toContain('Error: DB is down')
  })
})

describe('schedulingOAuth', () => {
  it('registers its own routes: an app’s /* route at the root does not collide; the decorator tells the key', async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const redirectUri = `${base}/callback`
    auth.allowRedirectUri(redirectUri)
    auth.setAuthorize('approve', 'acct_fastify')
    app = Fastify()
    const tokenStore = new MemoryTokenStore()
    // No prefix, next to the app's own catch-all: an all-methods "/*" would collide here.
    await app.register(schedulingOAuth, {
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      authUrl: auth.url,
      apiUrl: `${auth.url}/v1`,
      redirectUri,
      tokenStore,
      cookieSecret: 'f'.repeat(32),
      successRedirect: '/whoami',
    })
    app.all('/*', async () => ({ app: true }))
    app.get('/whoami', async (req) => ({ key: (await req.schedulingConnectedKey()) ?? null }))
    await app.listen({ port, host: '127.0.0.1' })

    expect((await request(`${base}/anything/else`)).json).toEqual({ app: true })
    expect((await request(`${base}/whoami`)).json).toEqual({ key: null })
    const login = await request(`${base}/login`)
    expect(login.status).toBe(302)
    const consent = await request(login.headers.get('location')!)
    const back = await request(consent.headers.get('location')!, {
      headers: { cookie: cookieHeader(login.headers) },
    })
    expect([back.status, back.headers.get('location')]).toEqual([302, '/whoami'])
    const who = await request(`${base}/whoami`, { headers: { cookie: cookieHeader(back.headers) } })
    expect(who.json).toEqual({ key: 'acct_fastify' })
    const wrong = await request(`${base}/login`, { method: 'POST' })
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET'])
  })

  it('takes cookieSecret as a list, newest first: a sign-in begun under the older secret completes', async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const redirectUri = `${base}/auth/scheduling/callback`
    auth.allowRedirectUri(redirectUri)
    auth.setAuthorize('approve', 'acct_rotated')
    const options = {
      prefix: '/auth/scheduling',
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      authUrl: auth.url,
      redirectUri,
      tokenStore: new MemoryTokenStore(),
    }
    const old = 'o'.repeat(32)
    const before = Fastify()
    await before.register(schedulingOAuth, { ...options, cookieSecret: old })
    await before.listen({ port, host: '127.0.0.1' })
    const login = await request(`${base}/auth/scheduling/login`)
    expect(login.status).toBe(302)
    await before.close()
    app = Fastify()
    await app.register(schedulingOAuth, { ...options, cookieSecret: ['n'.repeat(32), old] })
    await app.listen({ port, host: '127.0.0.1' })
    const consent = await request(login.headers.get('location')!)
    const back = await request(consent.headers.get('location')!, {
      headers: { cookie: cookieHeader(login.headers) },
    })
    expect(back.status).toBe(302)
    expect(await options.tokenStore.get('acct_rotated')).toBeDefined()
  })

  it('a missing cookieSecret is a ConfigError that says what to set', async () => {
    app = Fastify()
    const error = await app
      .register(schedulingOAuth, {
        prefix: '/auth/scheduling',
        clientId: 'c',
        clientSecret: 's',
        authUrl: 'http://127.0.0.1:9',
        redirectUri: 'http://127.0.0.1:9/auth/scheduling/callback',
        tokenStore: new MemoryTokenStore(),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(isSchedulingError(error)).toBe(true)
    expect((error as Error).name).toBe('ConfigError')
    expect((error as Error).message).toMatch(/cookieSecret is required/)
  })
})

describe('schedulingWebhooks(options): a plugin made ahead, with the handler’s methods', () => {
  it('registers like the plugin itself; replay() runs a failed delivery again; health() and on() are the handler’s', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    let failing = true
    const seen: Array<{ id: string; replay: unknown }> = []
    const webhooks = schedulingWebhooks({
      secret: SECRET,
      ledger,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    expect(
      webhooks.on('event.created', (event, context) => {
        if (failing) throw new Error('not yet')
        seen.push({ id: event.id, replay: context.replay })
      }),
    ).toBe(webhooks)
    app = Fastify()
    await app.register(webhooks, { prefix: '/hooks' })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const body = envelope('event.created')
    const { id } = JSON.parse(body) as { id: string }
    expect(
      (await deliver(`${base}/hooks/webhooks/scheduling`, body, { secret: SECRET })).status,
    ).toBe(500)
    expect((await ledger.get(id))?.status).toBe('failed')
    failing = false
    const report = await webhooks.replay(id, { reason: 'fixed the bug' })
    expect(report.replayed).toBe(1)
    expect(seen).toEqual([{ id, replay: { of: id, reason: 'fixed the bug' } }])
    expect((await ledger.get(id))?.status).toBe('done')
    expect((await webhooks.health()).ok).toBe(true)
    expect(webhooks.handler.path).toBe('/webhooks/scheduling')
  })

  it('two plugins made from one options object are two handlers: each answers its own prefix', async () => {
    const hits: string[] = []
    const a = schedulingWebhooks({
      secret: SECRET,
      on: { 'event.created': () => void hits.push('a') },
    })
    const b = schedulingWebhooks({
      secret: SECRET,
      on: { 'event.created': () => void hits.push('b') },
    })
    app = Fastify()
    await app.register(a, { prefix: '/a' })
    await app.register(b, { prefix: '/b' })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    expect(
      (await deliver(`${base}/b/webhooks/scheduling`, envelope(), { secret: SECRET })).status,
    ).toBe(200)
    expect(
      (await deliver(`${base}/a/webhooks/scheduling`, envelope(), { secret: SECRET })).status,
    ).toBe(200)
    expect(hits).toEqual(['b', 'a'])
  })
})
