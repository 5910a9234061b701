import {
  type ConnectionChange,
  createOAuthClient,
  createTokenManager,
  createWebhookSubscriptions,
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
}

/** An event as this app records it: whose it is, and what. */
export interface AccountEvent {
  account: string | undefined
  type: string
  id: string
  webhookId: string | undefined
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

  const app: Express = express()
  app.use(
    schedulingWebhooks({
      subscriptions,
      onAny: (event, { account, webhookId }) =>
        void events.push({ account, type: event.type, id: event.id, webhookId }),
    }),
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
  return { app, events, changes, subscriptions, tokenStore, tokens }
}
