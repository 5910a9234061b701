// The Hono recipe of docs/recipes.md, over real loopback HTTP: webhooks and the OAuth routes
// through their Fetch handlers, and a body Hono read first named as such.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { envelope, sign } from '../helpers.js'

const SECRET = 'hono-secret'
const silent = { debug() {}, info() {}, warn() {}, error() {} }

/** A Fetch app on a Node server: each request becomes a `Request`, its `Response` is written back. */
async function serveFetch(fetch: (request: Request) => Response | Promise<Response>) {
  const server: Server = createServer(async (req, res) => {
    const url = `http://${req.headers.host}${req.url}`
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const request = new Request(url, {
      method: req.method,
      headers: req.headers as Record<string, string>,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream) : undefined,
      duplex: 'half',
    } as RequestInit)
    const response = await fetch(request)
    const headers: Record<string, string | string[]> = {}
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') headers[name] = value
    })
    const cookies = response.headers.getSetCookie()
    if (cookies.length > 0) headers['set-cookie'] = cookies
    res.writeHead(response.status, headers).end(Buffer.from(await response.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

let auth: TokenServer
beforeAll(async () => {
  auth = await startTokenServer()
})
afterAll(() => auth.close())

describe('Hono, through the Fetch handlers', () => {
  it('webhooks and the whole OAuth flow', async () => {
    const handled: string[] = []
    const tokenStore = new MemoryTokenStore()
    const app = new Hono()
    let oauth: ReturnType<typeof createOAuthRoutes<Request>> | undefined
    const webhooks = createWebhookHandler(SECRET, { logger: silent }).on(
      'event.created',
      (event) => void handled.push(event.id),
    )
    app.post('/webhooks/scheduling', (c) => webhooks.fetch(c.req.raw))
    app.all('/auth/scheduling/*', (c) => oauth!.fetch(c.req.raw))
    app.get('/whoami', async (c) =>
      c.json({ key: (await oauth!.connectedKey(c.req.raw.headers)) ?? null }),
    )
    const server = await serveFetch(app.fetch)
    try {
      const redirectUri = `${server.base}/auth/scheduling/callback`
      auth.allowRedirectUri(redirectUri)
      oauth = createOAuthRoutes<Request>({
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        authUrl: auth.url,
        apiUrl: `${auth.url}/v1`,
        redirectUri,
        tokenStore,
        cookieSecret: 'h'.repeat(32),
        successRedirect: '/whoami',
        logger: silent,
      })
      const body = JSON.stringify(envelope('event.created'))
      const delivered = await fetch(`${server.base}/webhooks/scheduling`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
        body,
      })
      expect(delivered.status).toBe(200)
      expect(handled).toEqual([JSON.parse(body).id])

      auth.setAuthorize('approve', 'acct_hono')
      const login = await fetch(`${server.base}/auth/scheduling/login`, { redirect: 'manual' })
      expect(login.status).toBe(302)
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!
      const consent = await fetch(login.headers.get('location')!, { redirect: 'manual' })
      const back = await fetch(consent.headers.get('location')!, {
        redirect: 'manual',
        headers: { cookie },
      })
      expect([back.status, back.headers.get('location')]).toEqual([302, '/whoami'])
      const connection = back.headers
        .getSetCookie()
        .map((c) => c.split(';')[0]!)
        .filter((c) => !c.endsWith('='))
        .join('; ')
      const who = await fetch(`${server.base}/whoami`, { headers: { cookie: connection } })
      expect(await who.json()).toEqual({ key: 'acct_hono' })
      expect((await fetch(`${server.base}/auth/scheduling/other`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it('a body Hono read first (c.req.json()) answers body_parsed with the fix', async () => {
    const webhooks = createWebhookHandler(SECRET, { logger: silent })
    const app = new Hono()
    app.post('/webhooks/scheduling', async (c) => {
      await c.req.json()
      return webhooks.fetch(c.req.raw)
    })
    const server = await serveFetch(app.fetch)
    try {
      const body = JSON.stringify(envelope())
      const answer = await fetch(`${server.base}/webhooks/scheduling`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign(body, SECRET) },
        body,
      })
      expect(answer.status).toBe(500)
      const { error } = (await answer.json()) as { error: { code: string; message: string } }
      expect(error.code).toBe('body_parsed')
      expect(error.message).toContain('c.req.raw')
    } finally {
      await server.close()
    }
  })
})
