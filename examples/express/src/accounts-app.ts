import {
  type ConnectionChange,
  createDeliveryPage,
  createScheduling,
  memoryStores,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import express, { type Express } from 'express'
import { hasAdminCookie } from './admin.js'

export interface AccountsAppConfig {
  publicUrl: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  cookieSecret: string
  /** Opens the delivery page at /admin/deliveries: the cookie `admin=<adminToken>`. */
  adminToken: string
}

/** An event as this app records it: whose it is, and what. */
export interface AccountEvent {
  account: string | undefined
  type: string
  id: string
  webhookId: string | undefined
  /** The Event's state the delivery carried. */
  state?: string
  /** How it came: the service, a replay, or the catch-up sweep. */
  how: 'delivered' | 'replayed' | 'caught up'
}

/**
 * A multi-tenant app: every account that connects gets its own webhook on the service, each
 * delivery is verified with that webhook's secret and attributed to its account, and
 * disconnecting deletes the webhook. Swap `memoryStores()` for `redisStores(...)` or
 * `postgresStores(...)` to run several instances.
 */
export function createAccountsApp(config: AccountsAppConfig) {
  const events: AccountEvent[] = []
  // Every change of a connection, as the routes, the token manager and the subscriptions tell it.
  const changes: ConnectionChange[] = []
  const stores = memoryStores()
  // Every delivery recorded with its outcome: what the service gave up on is recovered by
  // catchUp(), a delivery that failed twice is kept to replay, a late one is stale.
  const scheduling = createScheduling({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    cookieSecret: config.cookieSecret,
    webhookUrl: `${config.publicUrl}/webhooks/scheduling`,
    stores,
    ledger: { maxAttempts: 2 },
    onConnectionChange: (change) => void changes.push(change),
  })
  const { tokens, ledger } = scheduling
  const subscriptions = scheduling.subscriptions!
  // A switch for the demo: the handlers fail while it is on (a database down, say).
  const faults = { failing: false }
  const webhooks = schedulingWebhooks({
    ...scheduling,
    onAny: (event, { account, webhookId, replay, catchUp }) => {
      if (faults.failing) throw new Error('the bookings database is down')
      const state = (event.payload as { state?: string } | undefined)?.state
      const how = replay ? 'replayed' : catchUp ? 'caught up' : 'delivered'
      events.push({ account, type: event.type, id: event.id, webhookId, state, how })
    },
  })
  const app: Express = express()
  app.use(webhooks)
  app.use(
    '/admin/deliveries',
    createDeliveryPage(ledger!, {
      authorize: (req) => hasAdminCookie(req.headers.cookie, 'admin', config.adminToken),
      replay: webhooks.replay,
    }).node,
  )
  const oauth = schedulingOAuth(scheduling)
  app.use('/auth/scheduling', oauth)
  app.get('/api/events', (_req, res) => void res.json(events))
  // Where this browser's connection stands: connected (to which account), needs to sign in
  // again, or disconnected, and its webhook.
  app.get('/api/connection', async (req, res, next) => {
    try {
      const key = await oauth.connectedKey(req)
      if (!key) return void res.json({ state: 'disconnected' })
      res.json(await subscriptions.status(key))
    } catch (error) {
      next(error)
    }
  })
  return {
    app,
    events,
    changes,
    subscriptions,
    tokenStore: stores.tokens,
    tokens,
    ledger: ledger!,
    webhooks,
    faults,
  }
}
