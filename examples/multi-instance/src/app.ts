// One instance of the app: every instance shares Redis for the tokens (one refresh per expiry
// across all of them), the sign-in states and webhook dedupe, and the durable queue.
import type { AddressInfo } from 'node:net'
import { createBullMQQueue } from '@scheduling-kit/bullmq'
import {
  createOAuthClient,
  createSchedulingClient,
  createTokenManager,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import { RedisDedupeStore, RedisTokenStore } from '@scheduling-kit/redis'
import express from 'express'
import { Redis } from 'ioredis'
import { fromEnv } from './config.js'

const config = fromEnv()
// Requests of a delivery fail at once while Redis is down, and within 2 s when it hangs
// (answered 5xx, the service retries), instead of waiting in ioredis's offline queue.
const redis = new Redis(config.redisUrl, {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 2_000,
})
redis.on('error', (error) => console.error(`[${config.instance}] redis: ${error.message}`))
await new Promise((resolve) => redis.once('ready', resolve))

const tokenStore = new RedisTokenStore({ client: redis, prefix: config.prefix })
const oauthOptions = {
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
  authUrl: config.authUrl,
}
const manager = createTokenManager({ oauth: createOAuthClient(oauthOptions), store: tokenStore })

const app = express()
app.use((_req, res, next) => {
  res.setHeader('x-instance', config.instance)
  next()
})
app.use(
  schedulingWebhooks({
    secret: config.webhookSecret,
    dedupe: new RedisDedupeStore({ client: redis, prefix: config.prefix }),
    queue: createBullMQQueue({ connection: { url: config.redisUrl }, queueName: config.queueName }),
  }),
)
const oauth = schedulingOAuth({
  ...oauthOptions,
  apiUrl: config.apiUrl,
  tokenStore,
  // The login may reach one instance and the callback another: the state is single-use across all.
  stateStore: new RedisDedupeStore({ client: redis, prefix: `${config.prefix}state:` }),
  cookieSecret: config.cookieSecret,
})
app.use('/auth/scheduling', oauth)
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

const server = app.listen(config.port, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.send?.({ type: 'ready', port })
})
