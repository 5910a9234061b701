// Koa conventions beyond the shared suite: the @koa/router recipe of the README, and errors
// reported through the app's `error` event.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { bodyParser } from '@koa/bodyparser'
import { Router } from '@koa/router'
import {
  cookieHeader,
  deliver,
  envelope,
  request,
  startTokenServer,
  type TokenServer,
} from '@scheduling-kit/conformance'
import Koa from 'koa'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { MemoryTokenStore, schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const SECRET = 'koa-router-secret'
let auth: TokenServer
let server: Server | undefined
beforeAll(async () => {
  auth = await startTokenServer()
})
afterAll(() => auth.close())
afterEach(async () => {
  vi.restoreAllMocks()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

async function listen(app: Koa): Promise<string> {
  // Koa composes its middleware when callback() is called: call it per request, so a test can
  // add middleware after it knows its port.
  server = createServer((req, res) => app.callback()(req, res))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('under a prefixed @koa/router (the README recipe)', () => {
  it('webhooks, the whole OAuth flow and the app’s own routes, all under /api', async () => {
    const app = new Koa()
    const base = await listen(app)
    const redirectUri = `${base}/api/auth/scheduling/callback`
    auth.allowRedirectUri(redirectUri)
    const handled: string[] = []
    const tokenStore = new MemoryTokenStore()

    // The recipe: full paths in the options, the router's all() for the paths.
    const router = new Router({ prefix: '/api' })
    const webhooks = schedulingWebhooks(SECRET, { path: '/api/webhooks/scheduling' }).on(
      'event.created',
      (event) => void handled.push(event.id),
    )
    const oauth = schedulingOAuth({
      prefix: '/api/auth/scheduling',
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      authUrl: auth.url,
      apiUrl: `${auth.url}/v1`,
      redirectUri,
      tokenStore,
      cookieSecret: 'k'.repeat(32),
      successRedirect: '/api/whoami',
    })
    router.all('/webhooks/scheduling', webhooks)
    router.all('/auth/scheduling/:route', oauth)
    router.get('/whoami', async (ctx) => {
      ctx.body = { key: (await oauth.connectedKey(ctx)) ?? null }
    })
    app.use(router.routes()).use(router.allowedMethods())

    const body = envelope('event.created')
    const first = await deliver(`${base}/api/webhooks/scheduling`, body, { secret: SECRET })
    expect(first.status, first.text).toBe(200)
    expect(handled).toEqual([JSON.parse(body).id])
    const wrong = await deliver(`${base}/api/webhooks/scheduling`, body, { method: 'PUT' })
    expect([wrong.status, wrong.json.error?.code]).toEqual([405, 'method_not_allowed'])

    auth.setAuthorize('approve', 'acct_router')
    const login = await request(`${base}/api/auth/scheduling/login`)
    expect(login.status).toBe(302)
    const cookie = cookieHeader(login.headers)
    const consent = await request(login.headers.get('location')!)
    const back = await request(consent.headers.get('location')!, { headers: { cookie } })
    expect([back.status, back.headers.get('location')]).toEqual([302, '/api/whoami'])
    expect(await tokenStore.get('acct_router')).toBeDefined()
    const who = await request(`${base}/api/whoami`, {
      headers: { cookie: cookieHeader(back.headers) },
    })
    expect(who.json).toEqual({ key: 'acct_router' })
    expect((await request(`${base}/api/auth/scheduling/nope`)).status).toBe(404)
  })
})

describe('errors through the app’s error event', () => {
  it('a throwing handler reaches app.on("error") with its stack; the console stays quiet', async () => {
    const app = new Koa()
    const reported: Error[] = []
    app.on('error', (error: Error) => void reported.push(error))
    const consoleError = vi.spyOn(console, 'error')
    app.use(
      schedulingWebhooks(SECRET).on('event.created', () => {
        throw new Error('DB is down')
      }),
    )
    const base = await listen(app)
    const answer = await deliver(`${base}/webhooks/scheduling`, envelope(), { secret: SECRET })
    expect(answer.status).toBe(500)
    expect(reported).toHaveLength(1)
    expect(reported[0]!.message).toMatch(/500 handler_failed/)
    expect(reported[0]!.stack).toContain('Error: DB is down')
    expect(reported[0]!.stack).toMatch(/\n\s+at .*koa\.test\.ts/)
    expect(consoleError).not.toHaveBeenCalled()
  })

  it('with no listener, Koa prints it with its stack (Koa’s own default)', async () => {
    const app = new Koa()
    const printed: string[] = []
    vi.spyOn(console, 'error').mockImplementation((...args) => void printed.push(args.join(' ')))
    app.use(
      schedulingWebhooks(SECRET).on('event.created', () => {
        throw new Error('DB is down')
      }),
    )
    const base = await listen(app)
    expect(
      (await deliver(`${base}/webhooks/scheduling`, envelope(), { secret: SECRET })).status,
    ).toBe(500)
    expect(printed.join('\n')).toContain('Error: DB is down')
  })

  it('a logger option wins over the error event', async () => {
    const app = new Koa()
    const reported: Error[] = []
    app.on('error', (error: Error) => void reported.push(error))
    const lines: string[] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (m: string) => void lines.push(m) }
    app.use(
      schedulingWebhooks(SECRET, { logger }).on('event.created', () => {
        throw new Error('DB is down')
      }),
    )
    const base = await listen(app)
    await deliver(`${base}/webhooks/scheduling`, envelope(), { secret: SECRET })
    expect(reported).toEqual([])
    expect(lines.join('\n')).toContain('DB is down')
  })
})

describe('a body parser mounted before the middleware', () => {
  it('its refusals on the webhook path are summarised (one line, no stacks), other errors still reach Koa', async () => {
    const printed: string[] = []
    for (const level of ['error', 'warn', 'info'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        printed.push(args.map(String).join(' '))
      })
    }
    const app = new Koa()
    app.use(bodyParser())
    app.use(schedulingWebhooks(SECRET))
    app.use(async (ctx) => {
      if (ctx.path === '/boom') throw new Error('app route failed')
      ctx.body = 'ok'
    })
    const server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      expect((await fetch(`${base}/`)).status).toBe(200)
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${base}/webhooks/scheduling`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `not json ${i}`,
        })
        expect(res.status).toBe(400)
      }
      const summary = printed.filter((line) => line.includes('a body parser mounted before'))
      expect(summary).toHaveLength(1)
      expect(printed.filter((line) => line.includes('SyntaxError'))).toEqual([])
      expect((await fetch(`${base}/boom`)).status).toBe(500)
      expect(printed.some((line) => line.includes('app route failed'))).toBe(true)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('a JSON parser that keeps no raw body, mounted first', () => {
  it('verifies the service’s compact body by its parsed value; other bytes keep body_parsed', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const app = new Koa()
    // What koa-body and hand-written parsers do: ctx.request.body only, no rawBody.
    app.use(async (ctx, next) => {
      if (ctx.is('application/json')) {
        const chunks: Buffer[] = []
        for await (const chunk of ctx.req) chunks.push(chunk as Buffer)
        ;(ctx.request as { body?: unknown }).body = JSON.parse(Buffer.concat(chunks).toString())
      }
      await next()
    })
    const seen: string[] = []
    app.use(schedulingWebhooks(SECRET).on('event.*', (event) => void seen.push(event.id)))
    const hook = `${await listen(app)}/webhooks/scheduling`
    const body = envelope()
    expect((await deliver(hook, body, { secret: SECRET })).status).toBe(200)
    expect(seen).toEqual([JSON.parse(body).id])
    const spaced = await deliver(hook, JSON.stringify(JSON.parse(envelope()), null, 2), {
      secret: SECRET,
    })
    expect(spaced.status).toBe(500)
    expect(spaced.json.error?.code).toBe('body_parsed')
    expect(seen).toHaveLength(1)
  })
})
