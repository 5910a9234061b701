import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { type AnyWebhookEvent, createWebhookHandler, type WebhookError } from '@scheduling-kit/core'

export interface ReceivedEvent {
  type: string
  id: string
  webhookId: string | undefined
  at: string
}

export interface AppOptions {
  secret: string
  /** Makes the next N deliveries fail, to show the service's retry (demo only). */
  failNext?: { count: number }
  log?: (line: string) => void
}

/** An app that already has its own routes, with the webhook endpoint added beside them. */
export function createApp(options: AppOptions): {
  server: Server
  received: ReceivedEvent[]
  errors: WebhookError[]
} {
  const received: ReceivedEvent[] = []
  const errors: WebhookError[] = []
  const log = options.log ?? (() => {})

  const webhooks = createWebhookHandler({
    secret: options.secret,
    onAny: (event: AnyWebhookEvent, { webhookId }) => {
      if (options.failNext && options.failNext.count > 0) {
        options.failNext.count--
        throw new Error(`simulated failure while handling ${event.id}`)
      }
      received.push({ type: event.type, id: event.id, webhookId, at: new Date().toISOString() })
      log(`handled ${event.type} ${event.id}`)
    },
    onError: (error) => {
      errors.push(error)
      log(`answered ${error.status} ${error.code}`)
    },
  })
  webhooks.on('event.checkout.*', (event) => {
    log(
      `checkout ${event.type.slice('event.checkout.'.length)} for ${event.payload?.id ?? 'an event'}`,
    )
  })

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const answer = await webhooks.handle({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: req,
    })
    if (answer) {
      res.writeHead(answer.status, answer.headers).end(answer.body)
      return
    }
    // The app's own routes.
    if (req.method === 'GET' && req.url === '/api/events') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received))
      return
    }
    if (req.method === 'GET' && req.url === '/') {
      const rows = received.map((e) => `<li><code>${e.type}</code> ${e.id}</li>`).join('')
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>Events</title><h1>Received events</h1><ul>${rows}</ul>`)
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found')
  })
  return { server, received, errors }
}
