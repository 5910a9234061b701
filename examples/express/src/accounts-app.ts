import {
  type ConnectionChange,
  createDeliveryLedger,
  createOAuthClient,
  createTokenManager,
  createWebhookSubscriptions,
  MemoryLedgerStore,
  MemorySubscriptionStore,
  MemoryTokenStore,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import express, { type Express } from 'express'

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
 * disconnecting deletes the webhook. Swap the memory stores for Redis or PostgreSQL ones
 * (RedisTokenStore + RedisSubscriptionStore, ...) to run several instances.
 */
export function createAccountsApp(config: AccountsAppConfig) {
  const tokenStore = new MemoryTokenStore()
  const tokens = createTokenManager({
    oauth: createOAuthClient({
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
      authUrl: config.authUrl,
    }),
    store: tokenStore,
  })
  const subscriptions = createWebhookSubscriptions({
    url: `${config.publicUrl}/webhooks/scheduling`,
    tokens,
    apiUrl: config.apiUrl,
    store: new MemorySubscriptionStore(),
    onConnectionChange: (change) => void changes.push(change),
  })
  const events: AccountEvent[] = []
  // Every change of a connection, as the routes and the subscriptions tell it.
  const changes: ConnectionChange[] = []

  // Every delivery recorded with its outcome: what the service gave up on is recovered by
  // catchUp(), a delivery that failed twice is kept to replay, a late one is stale.
  const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), maxAttempts: 2 })
  // A switch for the demo: the handlers fail while it is on (a database down, say).
  const faults = { failing: false }
  const webhooks = schedulingWebhooks({
    subscriptions,
    ledger,
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
    ledger.page({
      authorize: (req) => (req.headers.cookie ?? '').includes(`admin=${config.adminToken}`),
      replay: webhooks.replay,
    }).node,
  )
  const oauth = schedulingOAuth({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    tokenStore,
    cookieSecret: config.cookieSecret,
    subscriptions,
    onConnectionChange: (change) => void changes.push(change),
  })
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
  return { app, events, changes, subscriptions, tokenStore, tokens, ledger, webhooks, faults }
}
