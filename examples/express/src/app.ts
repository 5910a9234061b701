import {
  type AnyWebhookEvent,
  createDeliveryPage,
  createScheduling,
  keepRawBody,
  MemoryLedgerStore,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import express, { type Express, type Response } from 'express'
import { hasAdminCookie } from './admin.js'
import type { Config } from './config.js'
import { JsonFileTokenStore } from './file-store.js'
import { type Account, homePage } from './page.js'

/** What the page shows of an event. */
export interface Received {
  type: string
  id: string
  /** When it happened, as the service says. */
  occurredAt: string
  /** The first attendee who is not the organizer. */
  attendee?: string
  state?: string
  startAt?: string
}

function describe(event: AnyWebhookEvent): Received {
  const payload = (event.payload ?? {}) as {
    state?: unknown
    start_at?: unknown
    attendees?: Array<{ display_name?: string; email?: string; is_organizer?: boolean }>
  }
  const guest = payload.attendees?.find((a) => !a.is_organizer) ?? payload.attendees?.[0]
  return {
    type: event.type,
    id: event.id,
    occurredAt: event.occurred_at ?? '',
    attendee: guest ? (guest.display_name ?? guest.email) : undefined,
    state: typeof payload.state === 'string' ? payload.state : undefined,
    startAt: typeof payload.start_at === 'string' ? payload.start_at : undefined,
  }
}

/**
 * An app that already existed (its JSON API, its page), with scheduling-kit added: webhooks
 * verified and typed, accounts connected through OAuth, tokens kept fresh in its own store.
 */
export function createApp(
  config: Config,
  faults: { failNextDeliveries: number } = { failNextDeliveries: 0 },
) {
  const store = new JsonFileTokenStore(config.tokenFile)
  const received: Received[] = []
  // Open Server-Sent Events streams: each new event goes to every one.
  const streams = new Set<Response>()

  // Everything configured once: the app's own token store, and a delivery ledger that records
  // every delivery with its outcome. One that failed twice is kept as a dead letter, to replay
  // from the page at /admin/deliveries once its cause is fixed.
  const scheduling = createScheduling({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    secret: config.webhookSecret,
    cookieSecret: config.cookieSecret,
    stores: { tokens: store, ledger: new MemoryLedgerStore() },
    ledger: { maxAttempts: 2 },
  })
  const ledger = scheduling.ledger!
  const webhooks = schedulingWebhooks({
    ...scheduling,
    onAny: (event: AnyWebhookEvent) => {
      if (faults.failNextDeliveries > 0) {
        faults.failNextDeliveries--
        throw new Error(`simulated outage while handling ${event.id}`)
      }
      const entry = describe(event)
      received.unshift(entry)
      for (const stream of streams)
        stream.write(`event: webhook\ndata: ${JSON.stringify(entry)}\n\n`)
    },
  }).on('event.canceled', (event) => {
    console.log(`canceled: ${event.payload?.cancel_reason ?? 'no reason given'}`)
  })

  const oauth = schedulingOAuth(scheduling)

  const app: Express = express()
  // The app's own JSON parser, keeping the raw bytes for the webhook signature.
  app.use(express.json({ verify: keepRawBody }))
  app.use(webhooks)
  app.use('/auth/scheduling', oauth)
  // The delivery page, for the app's operator only: here, a browser holding the admin cookie.
  const deliveries = createDeliveryPage(ledger, {
    authorize: (req) => hasAdminCookie(req.headers.cookie, 'example_admin', config.adminToken),
    replay: webhooks.replay,
  })
  app.use('/admin/deliveries', deliveries.node)

  app.get('/api/events', (_req, res) => void res.json(received))
  app.get('/api/me', async (req, res, next) => {
    try {
      const key = await oauth.connectedKey(req)
      if (!key) return void res.status(401).json({ error: 'not connected' })
      res.json(await scheduling.client(key).me())
    } catch (error) {
      next(error)
    }
  })
  app.post('/api/notes', (req, res) => void res.status(201).json({ note: req.body }))
  app.get('/api/events/stream', (req, res) => {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    })
    res.write(': connected\n\n')
    streams.add(res)
    req.on('close', () => streams.delete(res))
  })
  app.get('/', async (req, res) => {
    const key = await oauth.connectedKey(req)
    const record = key ? await store.get(key) : undefined
    res.type('html').send(homePage(record?.account as Account | undefined, received))
  })

  /** Ends the open event streams (a server closing waits for them otherwise). */
  const closeStreams = () => {
    for (const stream of streams) stream.end()
    streams.clear()
  }
  return { app, store, received, scheduling, ledger, closeStreams }
}
