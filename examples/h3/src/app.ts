import { createScheduling, schedulingOAuth, schedulingWebhooks } from '@scheduling-kit/h3'
import { H3, html } from 'h3'
import { VersionedJsonTokenStore } from './versioned-store.js'

export interface H3ExampleConfig {
  publicUrl: string
  webhookSecret: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  cookieSecret: string
  tokenFile: string
}

/** An h3 app with its own routes, plus scheduling-kit's middleware and OAuth sub-app. */
export function createApp(config: H3ExampleConfig) {
  const store = new VersionedJsonTokenStore(config.tokenFile)
  const received: Array<{ type: string; id: string }> = []
  // Configured once, on the app's own token store; the middleware and the OAuth sub-app share it.
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
  const oauth = schedulingOAuth(scheduling)
  const app = new H3()
    .use(
      schedulingWebhooks(scheduling).on(
        'event.*',
        (event) => void received.unshift({ type: event.type, id: event.id }),
      ),
    )
    .mount('/auth/scheduling', oauth)
    .get('/api/events', () => received)
    .get('/', async (event) => {
      const key = await oauth.connectedKey(event)
      const account = key ? (await store.get(key))?.account : undefined
      const who = account
        ? `<p id="account">Connected as ${String(account.name ?? account.id).replace(/[<&]/g, '')}</p>`
        : '<a id="connect" href="/auth/scheduling/login">Connect</a>'
      const list = received.map((e) => `<li>${e.type} ${e.id}</li>`).join('')
      return html(`<!doctype html><title>Bookings</title>${who}<ul id="events">${list}</ul>`)
    })
    .get('/api/account', async (event) => {
      const key = await oauth.connectedKey(event)
      return (key && (await store.get(key))?.account) || { connected: false }
    })
  return { app, store, received }
}
