// One webhook endpoint per framework and variant, served on a port: run as a child process by
// ../adapters.ts so that the load generator does not share the server's event loop.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import * as sk from '@scheduling-kit/express'
import * as skFastify from '@scheduling-kit/fastify'
import * as skH3 from '@scheduling-kit/h3'
import * as skKoa from '@scheduling-kit/koa'
import express from 'express'
import Fastify from 'fastify'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import Koa from 'koa'

export const SECRET = 'whsec_bench_adapters'
const PATH = '/webhooks/scheduling'
const options = { secret: SECRET, dedupe: false as const, onAny: () => {} }

/** The hand-written check: HMAC over the raw bytes, constant-time compare, parse. */
function handWritten(raw: Uint8Array, header: string | undefined): number {
  if (!header?.startsWith('sha256=')) return 401
  const expected = createHmac('sha256', SECRET).update(raw).digest()
  const given = Buffer.from(header.slice(7), 'hex')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 401
  JSON.parse(Buffer.from(raw).toString('utf8'))
  return 200
}

async function readRaw(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

const listen = (handler: Parameters<typeof createServer>[1], port: number) =>
  new Promise<void>((resolve) => createServer(handler).listen(port, '127.0.0.1', resolve))

export async function serve(
  framework: string,
  variant: 'ours' | 'baseline',
  port: number,
): Promise<void> {
  if (framework === 'express') {
    const app = express()
    if (variant === 'ours') {
      // As documented: the middleware before the app's own JSON parser.
      app.use(sk.schedulingWebhooks({ ...options }))
      app.use(express.json())
    } else {
      // Hand-written: the raw route must come before the app's JSON parser.
      const raw = express()
      raw.post(PATH, express.raw({ type: 'application/json' }), (req, res) => {
        const status = handWritten(req.body, req.get('x-service-signature'))
        res.status(status).json(status === 200 ? { received: true } : { error: 'bad signature' })
      })
      app.use(raw)
      app.use(express.json())
    }
    return listen(app, port)
  }
  if (framework === 'koa') {
    const app = new Koa()
    if (variant === 'ours') app.use(skKoa.schedulingWebhooks({ ...options }))
    else
      app.use(async (ctx, next) => {
        if (ctx.method !== 'POST' || ctx.path !== PATH) return next()
        const status = handWritten(await readRaw(ctx.req), ctx.get('x-service-signature'))
        ctx.status = status
        ctx.body = status === 200 ? { received: true } : { error: 'bad signature' }
      })
    return listen(app.callback(), port)
  }
  if (framework === 'fastify') {
    const app = Fastify()
    if (variant === 'ours') await app.register(skFastify.schedulingWebhooks, { ...options })
    else
      await app.register(async (scope) => {
        scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
          done(null, body),
        )
        scope.post(PATH, async (request, reply) => {
          const status = handWritten(
            request.body as Buffer,
            request.headers['x-service-signature'] as string,
          )
          return reply
            .code(status)
            .send(status === 200 ? { received: true } : { error: 'bad signature' })
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
        const raw = new Uint8Array(await event.req.arrayBuffer())
        const status = handWritten(raw, event.req.headers.get('x-service-signature') ?? undefined)
        return new Response(
          JSON.stringify(status === 200 ? { received: true } : { error: 'bad signature' }),
          {
            status,
            headers: { 'content-type': 'application/json' },
          },
        )
      })
    return listen(toNodeHandler(app), port)
  }
  throw new Error(`unknown framework ${framework}`)
}

if (process.argv[2] === 'serve') {
  const [, , , framework, variant, port] = process.argv
  await serve(framework!, variant as 'ours' | 'baseline', Number(port))
  // The parent asks for the CPU time used between two marks.
  let mark = process.cpuUsage()
  process.on('message', (message) => {
    if (message === 'mark') mark = process.cpuUsage()
    if (message === 'cpu') {
      const used = process.cpuUsage(mark)
      process.send?.({ cpuMicros: used.user + used.system })
    }
  })
  process.send?.('ready')
}
