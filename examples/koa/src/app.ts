import { bodyParser } from '@koa/bodyparser'
import { createScheduling, schedulingOAuth, schedulingWebhooks } from '@scheduling-kit/koa'
import Koa from 'koa'
import { DirectoryTokenStore } from './directory-store.js'

export interface KoaExampleConfig {
  publicUrl: string
  webhookSecret: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  cookieSecret: string
  tokenDir: string
}

/** A Koa app with its own body parser and routes, plus scheduling-kit's middleware. */
export function createApp(config: KoaExampleConfig) {
  const store = new DirectoryTokenStore(config.tokenDir)
  const received: Array<{ type: string; id: string }> = []
  // Configured once, on the app's own token store; the middleware and the router share it.
  const scheduling = createScheduling({
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
    authUrl: config.authUrl,
    apiUrl: config.apiUrl,
    secret: config.webhookSecret,
    cookieSecret: config.cookieSecret,
    stores: { tokens: store },
  })
  const oauth = schedulingOAuth({ ...scheduling, prefix: '/auth/scheduling' })

  const app = new Koa()
  // The webhooks first: they read the raw bytes themselves, and answer every case of the table.
  app.use(
    schedulingWebhooks(scheduling).onAny(
      (event) => void received.unshift({ type: event.type, id: event.id }),
    ),
  )
  app.use(bodyParser())
  app.use(oauth)
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && ctx.path === '/api/events') ctx.body = received
    else if (ctx.method === 'GET' && ctx.path === '/') {
      const key = await oauth.connectedKey(ctx)
      const account = key ? (await store.get(key))?.account : undefined
      const list = received.map((e) => `<li>${e.type} ${e.id}</li>`).join('')
      ctx.type = 'html'
      ctx.body = account
        ? `<p id="account">Connected as ${String(account.name ?? account.id).replace(/[<&]/g, '')}</p><ul>${list}</ul>`
        : `<a id="connect" href="/auth/scheduling/login">Connect</a><ul>${list}</ul>`
    } else await next()
  })
  return { app, store, received }
}
