// h3 beyond the shared suite: on Node the middleware reads the Node request itself, and a body
// something read before it is named as such, whichever way it was read.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, envelope } from '@scheduling-kit/conformance'
import { H3, type H3Event } from 'h3'
import { toNodeHandler } from 'h3/node'
import { afterEach, expect, it, vi } from 'vitest'
import { MemoryTokenStore, schedulingOAuth, schedulingWebhooks } from '../src/index.js'

let server: Server | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
})

async function serve(app: H3): Promise<string> {
  server = createServer(toNodeHandler(app))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/scheduling`
}

async function readWebStream(event: H3Event): Promise<void> {
  const reader = event.req.body!.getReader()
  while (!(await reader.read()).done) {}
}

it.each<[string, (event: H3Event) => Promise<unknown>]>([
  ['text()', (event) => event.req.text()],
  ['json()', (event) => event.req.json()],
  ['arrayBuffer()', (event) => event.req.arrayBuffer()],
  ['the Web stream', readWebStream],
  ['the Node request', (event) => new Response(event.runtime!.node!.req as never).text()],
])(
  'a body another middleware read through %s answers body_parsed with the fix, not a signature failure',
  async (_how, read) => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const app = new H3()
    app.use(async (event, next) => {
      await read(event).catch(() => {})
      return next()
    })
    app.use(schedulingWebhooks('h3-secret'))
    const answer = await deliver(await serve(app), envelope(), { secret: 'h3-secret' })
    expect(answer.status).toBe(500)
    expect(answer.json.error?.code).toBe('body_parsed')
    expect(answer.json.error?.message).toMatch(/already read.*Mount schedulingWebhooks\(\) before/)
  },
)

it('a Web stream another middleware opened but did not read is verified through it', async () => {
  const seen: string[] = []
  const app = new H3()
  app.use((event, next) => {
    // Opening the stream starts h3 pulling from the Node request: the bytes are in the stream now.
    expect(event.req.body).not.toBeNull()
    return next()
  })
  app.use(
    schedulingWebhooks('h3-secret', { dedupe: false, onAny: (event) => void seen.push(event.id) }),
  )
  const body = envelope('event.created', { note: 'x'.repeat(200_000) })
  const answer = await deliver(await serve(app), body, { secret: 'h3-secret' })
  expect(answer.status).toBe(200)
  expect(seen).toEqual([JSON.parse(body).id])
})

it('a raw body a Node middleware kept on the request is verified, and a changed one is refused', async () => {
  const app = new H3()
  let tamper = false
  app.use(async (event, next) => {
    // As body-parser's verify hook leaves it: the stream read, the bytes kept on the Node request.
    const req = event.runtime!.node!.req as IncomingMessage & { rawBody?: Buffer }
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks)
    if (tamper) raw[raw.length - 2]! ^= 1
    req.rawBody = raw
    return next()
  })
  app.use(schedulingWebhooks('h3-secret', { dedupe: false, onAny: () => {} }))
  const url = await serve(app)
  expect((await deliver(url, envelope(), { secret: 'h3-secret' })).status).toBe(200)
  tamper = true
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  const refused = await deliver(url, envelope(), { secret: 'h3-secret' })
  expect(refused.status).toBe(401)
  expect(refused.json.error?.code).toBe('signature_invalid')
})

it('a percent-encoded route segment (/%6Cogin) gets the sign-in cookie under the mount path, not a cut of the encoded path', async () => {
  const app = new H3()
  app.mount(
    '/auth/scheduling',
    schedulingOAuth({
      clientId: 'client-123',
      clientSecret: 'client-secret-xyz',
      authUrl: 'http://auth.test',
      redirectUri: 'http://127.0.0.1:9/auth/scheduling/callback',
      tokenStore: new MemoryTokenStore(),
      cookieSecret: 'c'.repeat(32),
    }),
  )
  const base = (await serve(app)).replace('/webhooks/scheduling', '')
  for (const path of ['/auth/scheduling/%6Cogin', '/auth/scheduling/login']) {
    const res = await fetch(`${base}${path}`, { redirect: 'manual' })
    expect(res.status, path).toBe(302)
    const cookie = res.headers.getSetCookie()[0]!
    expect(cookie, path).toMatch(/; Path=\/auth\/scheduling;/)
  }
})
