import {
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
  })
  const events: AccountEvent[] = []

  const app: Express = express()
  app.use(
    schedulingWebhooks({
      subscriptions,
      onAny: (event, { account, webhookId }) =>
        void events.push({ account, type: event.type, id: event.id, webhookId }),
    }),
  )
  app.use(
    '/auth/scheduling',
    schedulingOAuth({
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
      authUrl: config.authUrl,
      apiUrl: config.apiUrl,
      tokenStore,
      cookieSecret: config.cookieSecret,
      subscriptions,
    }),
  )
  app.get('/api/events', (_req, res) => void res.json(events))
  return { app, events, subscriptions, tokenStore, tokens }
}
