// Express conventions beyond the shared suite: errors handed to next(err) when asked, the
// console otherwise, and the body_parsed advice naming keepRawBody.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, envelope } from '@scheduling-kit/conformance'
import express from 'express'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryTokenStore, schedulingOAuth, schedulingWebhooks } from '../src/index.js'

const SECRET = 'express-secret'
let server: Server | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

async function listen(app: express.Express): Promise<string> {
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/scheduling`
}

const fail = () => {
  throw new Error('DB is down')
}

describe('errors', () => {
  it('forwardErrors: a throwing handler reaches the error middleware with status 500 and its stack; core does not log it too', async () => {
    const consoleError = vi.spyOn(console, 'error')
    const seen: Array<{ status: number; stack: string; cause: unknown }> = []
    const app = express()
    app.use(schedulingWebhooks(SECRET, { forwardErrors: true }).on('event.created', fail))
    app.use(
      (
        error: Error & { status: number },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        seen.push({ status: error.status, stack: error.stack ?? '', cause: error.cause })
        res.status(error.status).json({ handled: 'by the app' })
      },
    )
    const hook = await listen(app)
    const answer = await deliver(hook, envelope('event.created'), { secret: SECRET })
    expect([answer.status, answer.json]).toEqual([500, { handled: 'by the app' }])
    expect(seen).toHaveLength(1)
    expect(seen[0]!.status).toBe(500)
    expect(seen[0]!.stack).toContain('Error: DB is down')
    expect((seen[0]!.cause as Error).message).toBe('DB is down')
    expect(consoleError).not.toHaveBeenCalled()
    // Refusals are still answered by the middleware (and summarised in the log).
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    expect((await deliver(hook, envelope(), { secret: 'forged' })).status).toBe(401)
    expect(seen).toHaveLength(1)
  })

  it('by default the middleware answers 500 and prints the stack to the console', async () => {
    const printed: string[] = []
    vi.spyOn(console, 'error').mockImplementation((m) => void printed.push(String(m)))
    const app = express()
    app.use(schedulingWebhooks(SECRET).on('event.created', fail))
    const answer = await deliver(await listen(app), envelope('event.created'), { secret: SECRET })
    expect(answer.status).toBe(500)
    expect(answer.json.error?.code).toBe('handler_failed')
    expect(printed.join('\n')).toMatch(/Error: DB is down\n\s+at /)
  })

  it('body_parsed points at keepRawBody, and is told once', async () => {
    const warned: string[] = []
    vi.spyOn(console, 'warn').mockImplementation((m) => void warned.push(String(m)))
    const app = express()
    app.use(express.json())
    app.use(schedulingWebhooks(SECRET))
    const hook = await listen(app)
    for (let i = 0; i < 3; i++) {
      // Sent with spaces: the parsed value's compact serialization is not the signed bytes.
      const spaced = JSON.stringify(JSON.parse(envelope()), null, 2)
      const answer = await deliver(hook, spaced, { secret: SECRET })
      expect(answer.json.error?.code).toBe('body_parsed')
      expect(answer.json.error?.message).toContain(
        "keepRawBody from '@scheduling-kit/express': app.use(express.json({ verify: keepRawBody }))",
      )
    }
    expect(warned.filter((w) => w.includes('body_parsed'))).toHaveLength(1)
  })
})

describe('answers', () => {
  it('are sent whole with their Content-Length, not chunked, for every status', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {})
    const app = express()
    app.use(schedulingWebhooks(SECRET, { onAny: () => {} }))
    const url = await listen(app)
    const body = envelope('event.created', { note: 'Café ☕' })
    for (const [secret, status] of [
      [SECRET, 200],
      [SECRET, 200], // the retry: a duplicate
      ['another-secret', 401],
    ] as const) {
      const answer = await deliver(url, body, { secret })
      expect(answer.status).toBe(status)
      expect(answer.headers.get('transfer-encoding')).toBeNull()
      expect(Number(answer.headers.get('content-length'))).toBe(Buffer.byteLength(answer.text))
    }
  })
})

describe('OAuth routes: first-use traps over real HTTP', () => {
  const oauthOptions = (logger: { warn(l: string): void }) => ({
    clientId: 'client_1',
    clientSecret: 'secret_1',
    authUrl: 'http://127.0.0.1:9',
    redirectUri: 'http://127.0.0.1:3000/auth/scheduling/callback',
    tokenStore: new MemoryTokenStore(),
    cookieSecret: 'cookie-secret-0123456789abcdef0123456789',
    logger: { debug() {}, info() {}, error() {}, ...logger },
  })

  it("a case-insensitive match of the mount still sets the state cookie at the redirect URI's path", async () => {
    const app = express()
    app.use('/auth/scheduling', schedulingOAuth(oauthOptions({ warn() {} })))
    const base = (await listen(app)).replace('/webhooks/scheduling', '')
    const answer = await fetch(`${base}/AUTH/Scheduling/login`, { redirect: 'manual' })
    expect(answer.status).toBe(302)
    expect(answer.headers.get('set-cookie')).toMatch(/; Path=\/auth\/scheduling;/)
  })

  it("with 'trust proxy', X-Forwarded-Proto: https on an http: redirectUri warns once", async () => {
    const lines: string[] = []
    const app = express()
    app.set('trust proxy', true)
    app.use('/auth/scheduling', schedulingOAuth(oauthOptions({ warn: (l) => lines.push(l) })))
    const base = (await listen(app)).replace('/webhooks/scheduling', '')
    const headers = { 'x-forwarded-proto': 'https' }
    for (let i = 0; i < 2; i++)
      await fetch(`${base}/auth/scheduling/login`, { headers, redirect: 'manual' })
    expect(lines.filter((l) => /reached the app over HTTPS/.test(l))).toHaveLength(1)
  })
})
