// A webhook path the app composes (@scheduling-kit/core/compose), served by an Express 5 app as
// a user writes it: the glue of a few lines that docs/receive-webhooks.md shows, with
// express.json() mounted first (the layout most apps have) and without it.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, envelope } from '@scheduling-kit/conformance'
import { signPayload } from '@scheduling-kit/core'
import { nodeBody, writeNode } from '@scheduling-kit/core/adapter'
import {
  acceptParsedBody,
  checkSignature,
  composeWebhooks,
  dedupe,
  handlers,
  parseEvent,
  readBody,
  type WebhookPath,
} from '@scheduling-kit/core/compose'
import express from 'express'
import { afterEach, describe, expect, it, vi } from 'vitest'

const SECRET = 'express-composed-secret'
let server: Server | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

/** The app's own middleware for a composed path: its request handed over, its answer written. */
function serve(webhooks: WebhookPath): express.RequestHandler {
  return (req, res, next) => {
    webhooks
      .handle({
        method: req.method,
        path: req.url,
        headers: req.headers,
        body: nodeBody(
          req,
          req,
          (r) => (r as { rawBody?: unknown }).rawBody,
          (r) => r.body,
        ),
      })
      .then((answer) => writeNode(res, answer, next), next)
  }
}

function composed(ran: string[]): WebhookPath {
  return composeWebhooks({
    parts: [
      acceptParsedBody(),
      readBody(),
      checkSignature(SECRET),
      parseEvent(),
      dedupe(),
      handlers({ 'event.*': (event) => void ran.push(event.id) }),
    ],
  })
}

async function listen(app: express.Express): Promise<string> {
  app.get('/health', (_req, res) => void res.json({ ok: true }))
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('a composed webhook path in an Express 5 app', () => {
  it('after express.json(): a delivery verified by what the parser left, run once, its retry a duplicate; forged and tampered ones not run (500 body_parsed, as the preset: a mismatch after a parser may be a body it rewrote)', async () => {
    const ran: string[] = []
    const app = express()
    app.use(express.json())
    app.use(serve(composed(ran)))
    const origin = await listen(app)
    const hook = `${origin}/webhooks/scheduling`
    const body = envelope('event.created') // its payload's description is not ASCII
    const first = await deliver(hook, body, { secret: SECRET })
    expect([first.status, first.json]).toEqual([200, { received: true }])
    const again = await deliver(hook, body, { secret: SECRET })
    expect([again.status, again.json]).toEqual([200, { received: true, duplicate: true }])
    expect(ran).toEqual([JSON.parse(body).id])
    const forged = await deliver(hook, envelope(), { secret: 'not-the-secret' })
    expect([forged.status, forged.json.error?.code]).toEqual([500, 'body_parsed'])
    const tampered = envelope()
    const signedOther = await deliver(hook, tampered, {
      signature: await signPayload(tampered.replace('confirmed', 'canceled'), SECRET),
    })
    expect([signedOther.status, signedOther.json.error?.code]).toEqual([500, 'body_parsed'])
    expect(ran).toHaveLength(1)
    // Every other route is the app's.
    expect(await (await fetch(`${origin}/health`)).json()).toEqual({ ok: true })
  })

  it('after express.json(), a body the parser cannot give back (sent pretty-printed) is 500 body_parsed naming the fix, never 401 nor run', async () => {
    const ran: string[] = []
    const app = express()
    app.use(express.json())
    app.use(serve(composed(ran)))
    const hook = `${await listen(app)}/webhooks/scheduling`
    const pretty = JSON.stringify(JSON.parse(envelope()), null, 2)
    const answer = await deliver(hook, pretty, { secret: SECRET })
    expect(answer.status).toBe(500)
    const error = (answer.json as { error: { code: string; message: string } }).error
    expect(error.code).toBe('body_parsed')
    expect(error.message).toMatch(/body parser/)
    expect(ran).toEqual([])
  })

  it('mounted before any parser: the stream itself read, a pretty-printed body verified and run, a forged one 401', async () => {
    const ran: string[] = []
    const app = express()
    app.use(serve(composed(ran)))
    app.use(express.json())
    const hook = `${await listen(app)}/webhooks/scheduling`
    const pretty = JSON.stringify(JSON.parse(envelope('event.canceled')), null, 2)
    const answer = await deliver(hook, pretty, { secret: SECRET })
    expect([answer.status, answer.json]).toEqual([200, { received: true }])
    expect(ran).toEqual([JSON.parse(pretty).id])
    const forged = await deliver(hook, envelope(), { secret: 'not-the-secret' })
    expect([forged.status, forged.json.error?.code]).toEqual([401, 'signature_invalid'])
    expect(ran).toHaveLength(1)
  })
})
