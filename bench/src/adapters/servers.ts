// One webhook endpoint per framework and variant, served on a port: run as a child process by
// ../adapters.ts so that the load generator does not share the server's event loop.
//
// Each baseline is the fastest hand-written route its framework allows: the raw body read from
// the Node request by its events, HMAC + constant-time compare, JSON.parse, and the answer
// written with the framework's cheapest call. Every route answers the same 17-byte JSON body.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import { createNodeMiddleware, Webhooks as OctokitWebhooks } from '@octokit/webhooks'
import * as skExpress from '@scheduling-kit/express'
import * as skFastify from '@scheduling-kit/fastify'
import * as skH3 from '@scheduling-kit/h3'
import * as skKoa from '@scheduling-kit/koa'
import express from 'express'
import Fastify from 'fastify'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import Koa from 'koa'
import Stripe from 'stripe'

export const SECRET = 'whsec_bench_adapters'
export const PATH = '/webhooks/scheduling'
/** Every route's limit: the 1 MiB body of the large case fits, one byte more does not. */
export const LIMIT = 1024 * 1024
const ANSWER = '{"received":true}'
const ANSWER_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(ANSWER.length),
}
const options = { secret: SECRET, dedupe: false as const, onAny: () => {} }

export type Variant = 'ours' | 'baseline' | 'octokit' | 'stripe'

/** The hand-written check: HMAC over the raw bytes, constant-time compare, parse. */
function handWritten(raw: Buffer, header: string | string[] | undefined): number {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return 401
  const expected = createHmac('sha256', SECRET).update(raw).digest()
  const given = Buffer.from(header.slice(7), 'hex')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 401
  try {
    JSON.parse(raw.toString('utf8'))
  } catch {
    return 400
  }
  return 200
}

/** Reads the request by its events (cheaper than its async iterator), within the limit. */
function readRaw(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    req.on('data', (chunk: Buffer) => {
      total += chunk.length
      if (total <= LIMIT) chunks.push(chunk)
    })
    req.on('end', () =>
      resolve(total > LIMIT ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
    )
    req.on('error', reject)
  })
}

async function check(req: IncomingMessage): Promise<number> {
  const raw = await readRaw(req)
  return raw === undefined ? 413 : handWritten(raw, req.headers['x-service-signature'])
}

const listen = (handler: Parameters<typeof createServer>[1], port: number) =>
  new Promise<void>((resolve) => createServer(handler).listen(port, '127.0.0.1', resolve))

/** The anchors, in the same Express app as ours: octokit's middleware and stripe's recipe. */
function expressAnchor(app: express.Express, variant: 'octokit' | 'stripe'): void {
  if (variant === 'octokit') {
    const webhooks = new OctokitWebhooks({ secret: SECRET })
    webhooks.onAny(() => {})
    app.use(createNodeMiddleware(webhooks, { path: PATH }))
    return
  }
  // stripe's documented Express recipe: express.raw() on the route, constructEvent, res.json.
  const stripe = new Stripe('sk_test_bench')
  app.post(PATH, express.raw({ type: 'application/json', limit: LIMIT }), (req, res) => {
    try {
      stripe.webhooks.constructEvent(req.body, req.get('stripe-signature')!, SECRET, 3600)
    } catch {
      res.status(400).end()
      return
    }
    res.json({ received: true })
  })
}

export async function serve(framework: string, variant: Variant, port: number): Promise<void> {
  if (framework === 'express') {
    const app = express()
    if (variant === 'ours') app.use(skExpress.schedulingWebhooks({ ...options }))
    else if (variant === 'baseline')
      app.post(PATH, (req, res) => {
        check(req).then((status) =>
          status === 200
            ? res.writeHead(200, ANSWER_HEADERS).end(ANSWER)
            : res.writeHead(status).end(),
        )
      })
    else expressAnchor(app, variant)
    // The app's own JSON parser, after the webhook route as documented.
    app.use(express.json())
    return listen(app, port)
  }
  if (framework === 'koa') {
    const app = new Koa()
    if (variant === 'ours') app.use(skKoa.schedulingWebhooks({ ...options }))
    else
      app.use(async (ctx, next) => {
        if (ctx.method !== 'POST' || ctx.path !== PATH) return next()
        ctx.status = await check(ctx.req)
        if (ctx.status === 200) {
          ctx.set(ANSWER_HEADERS)
          ctx.body = ANSWER
        }
      })
    return listen(app.callback(), port)
  }
  if (framework === 'fastify') {
    const app = Fastify()
    if (variant === 'ours') await app.register(skFastify.schedulingWebhooks, { ...options })
    else
      await app.register(async (scope) => {
        // The stream as it comes: read by its events, as above.
        scope.removeAllContentTypeParsers()
        scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
        scope.post(PATH, async (request, reply) => {
          const status = await check(request.raw)
          return status === 200
            ? reply.headers(ANSWER_HEADERS).send(ANSWER)
            : reply.code(status).send()
        })
      })
    await app.listen({ port, host: '127.0.0.1' })
    return
  }
  if (framework === 'h3') {
    const app = new H3()
    if (variant === 'ours') app.use(skH3.schedulingWebhooks({ ...options }))
    else
      app.post(PATH, async (event) => {
        const status = await check(event.runtime!.node!.req as IncomingMessage)
        event.res.status = status
        if (status !== 200) return ''
        event.res.headers.set('content-type', ANSWER_HEADERS['content-type'])
        return ANSWER
      })
    return listen(toNodeHandler(app), port)
  }
  throw new Error(`unknown framework ${framework}`)
}

if (process.argv[2] === 'serve') {
  const [, , , framework, variant, port] = process.argv
  // The telemetry section's baseline: as if @opentelemetry/api were not installed. By default
  // the bench has it (without an SDK), as an app with OpenTelemetry set up elsewhere would.
  if (process.env.BENCH_TELEMETRY === 'off') skExpress.useOpenTelemetry(false)
  await serve(framework!, variant as Variant, Number(port))
  // The parent asks for the CPU time used between two marks.
  let mark = process.cpuUsage()
  process.on('message', (message) => {
    if (message === 'mark') mark = process.cpuUsage()
    if (message === 'cpu') {
      const used = process.cpuUsage(mark)
      process.send?.({ cpuMicros: used.user + used.system })
    }
  })
  // Forked: tell the parent by IPC. Under valgrind (./instructions.ts), on stdout.
  if (process.send) process.send('ready')
  else console.log('ready')
}
