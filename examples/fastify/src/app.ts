import { createScheduling, schedulingOAuth, schedulingWebhooks } from '@scheduling-kit/fastify'
import Fastify from 'fastify'
import { EncryptedFileTokenStore } from './encrypted-store.js'

export interface FastifyExampleConfig {
  publicUrl: string
  webhookSecret: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  cookieSecret: string
  tokenDir: string
  encryptionKey: Buffer
}

/** A Fastify app with its own JSON routes, plus scheduling-kit's plugins. */
export async function createApp(config: FastifyExampleConfig) {
  const store = new EncryptedFileTokenStore(config.tokenDir, config.encryptionKey)
  const received: Array<{ type: string; id: string }> = []
  // Configured once, on the app's own token store; both plugins take the same object.
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
  const app = Fastify()
  app.post('/api/notes', async (request, reply) => reply.code(201).send({ note: request.body }))
  app.get('/api/events', async () => received)
  await app.register(schedulingWebhooks, {
    ...scheduling,
    on: { '*': (event) => void received.unshift({ type: event.type, id: event.id }) },
  })
  await app.register(schedulingOAuth, { ...scheduling, prefix: '/auth/scheduling' })
  // The app's page: the connected account (the plugin's request decorator reads the signed
  // connection cookie) or a Connect link.
  app.get('/', async (request, reply) => {
    const key = await request.schedulingConnectedKey()
    const account = key ? (await store.get(key))?.account : undefined
    const who = account
      ? `<p id="account">Connected as ${String(account.name ?? account.id).replace(/[<&]/g, '')}</p>`
      : '<a id="connect" href="/auth/scheduling/login">Connect</a>'
    const list = received.map((e) => `<li>${e.type} ${e.id}</li>`).join('')
    return reply
      .type('text/html')
      .send(`<!doctype html><title>Bookings</title>${who}<ul id="events">${list}</ul>`)
  })
  return { app, store, received }
}
