import {
  type AnyWebhookEvent,
  createOAuthClient,
  createSchedulingClient,
  createTokenManager,
  keepRawBody,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import express, { type Express } from 'express'
import type { Config } from './config.js'
import { JsonFileTokenStore } from './file-store.js'

export interface Received {
  type: string
  id: string
  at: string
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ESC[c]!)

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
  const refreshes: string[] = []
  const oauthOptions = {
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
  }
  const manager = createTokenManager({
    oauth: createOAuthClient(oauthOptions),
    store,
    onRefreshed: (key) => void refreshes.push(key),
  })

  const webhooks = schedulingWebhooks({
    secret: config.webhookSecret,
    onAny: (event: AnyWebhookEvent) => {
      if (faults.failNextDeliveries > 0) {
        faults.failNextDeliveries--
        throw new Error(`simulated outage while handling ${event.id}`)
      }
      received.unshift({ type: event.type, id: event.id, at: new Date().toISOString() })
    },
  }).on('event.canceled', (event) => {
    console.log(`canceled: ${event.payload?.cancel_reason ?? 'no reason given'}`)
  })

  const oauth = schedulingOAuth({
    ...oauthOptions,
    apiUrl: config.apiUrl,
    tokenStore: store,
    cookieSecret: config.cookieSecret,
  })

  const app: Express = express()
  // The app's own JSON parser, keeping the raw bytes for the webhook signature.
  app.use(express.json({ verify: keepRawBody }))
  app.use(webhooks)
  app.use('/auth/scheduling', oauth)

  app.get('/api/events', (_req, res) => void res.json(received))
  app.get('/api/me', async (req, res, next) => {
    try {
      const key = await oauth.connectedKey(req)
      if (!key) return void res.status(401).json({ error: 'not connected' })
      const api = createSchedulingClient({ baseUrl: config.apiUrl, token: { manager, key } })
      res.json(await api.me())
    } catch (error) {
      next(error)
    }
  })
  app.post('/api/notes', (req, res) => void res.status(201).json({ note: req.body }))
  app.get('/', async (req, res) => {
    const key = await oauth.connectedKey(req)
    const record = key ? await store.get(key) : undefined
    const account = record?.account as { name?: string; id?: string } | undefined
    const who = account
      ? `<p id="account">Connected as <strong>${esc(String(account.name ?? account.id))}</strong></p>` +
        '<form method="post" action="/auth/scheduling/disconnect"><button id="disconnect">Disconnect</button></form>'
      : '<p><a id="connect" href="/auth/scheduling/login?returnTo=%2F">Connect your scheduling account</a></p>'
    const rows = received.map((e) => `<li><code>${esc(e.type)}</code> ${esc(e.id)}</li>`).join('')
    res
      .type('html')
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bookings</title></head><body style="font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto"><h1>Bookings</h1>${who}<h2>Received events</h2><ul id="events">${rows}</ul></body></html>`,
      )
  })

  return { app, store, received, refreshes, manager }
}
