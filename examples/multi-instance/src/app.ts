// One instance of the app: every instance shares one Redis, or one PostgreSQL database
// (src/backend.ts), for the tokens (one refresh per expiry across all of them), the sign-in
// states and webhook dedupe, the durable queue, and the connected accounts' webhooks, which
// every instance reconciles on a schedule.
import './telemetry.js'
import type { AddressInfo } from 'node:net'
import {
  checkHealth,
  createCredentialCipher,
  createOAuthClient,
  createSchedulingClient,
  createTokenManager,
  createWebhookSubscriptions,
  schedulingOAuth,
  schedulingWebhooks,
} from '@scheduling-kit/express'
import express from 'express'
import { appBackend } from './backend.js'
import { fromEnv } from './config.js'

const config = fromEnv()

// Tokens and webhook secrets are sealed at rest: a dump or a replica shows neither.
const keyList = config.credentialKeys.split(',').map((entry) => entry.split(':'))
const cipher = createCredentialCipher({
  keys: Object.fromEntries(keyList),
  current: keyList[0]![0]!,
})
const { tokenStore, stateStore, dedupe, subscriptionStore, queue } = await appBackend(
  config,
  cipher,
)
const oauthOptions = {
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  redirectUri: `${config.publicUrl}/auth/scheduling/callback`,
  authUrl: config.authUrl,
}
const manager = createTokenManager({ oauth: createOAuthClient(oauthOptions), store: tokenStore })

// Each connected account gets its own webhook, delivering to /webhooks/accounts.
const subscriptions = createWebhookSubscriptions({
  url: `${config.publicUrl}/webhooks/accounts`,
  tokens: manager,
  apiUrl: config.apiUrl,
  store: subscriptionStore,
})

const app = express()
app.use((_req, res, next) => {
  res.setHeader('x-instance', config.instance)
  next()
})
// The app's own webhook (one secret), and the connected accounts' (a secret each).
app.use(schedulingWebhooks({ secret: config.webhookSecret, dedupe, queue }))
const accountWebhooks = schedulingWebhooks({
  subscriptions,
  path: '/webhooks/accounts',
  dedupe,
  queue,
})
app.use(accountWebhooks)
const oauth = schedulingOAuth({
  ...oauthOptions,
  apiUrl: config.apiUrl,
  tokenStore,
  // The login may reach one instance and the callback another: the state is single-use across all.
  stateStore,
  cookieSecret: config.cookieSecret,
  subscriptions,
})
app.use('/auth/scheduling', oauth)
// Readiness, for the load balancer: what deliveries depend on (the dedupe store, the queue and
// the subscriptions' store) and the token store answer. 503, saying what is wrong, until then.
app.get('/ready', async (_req, res) => {
  const report = await checkHealth(
    { webhooks: accountWebhooks, tokens: tokenStore },
    { timeoutMs: 1_000 },
  )
  res.status(report.ok ? 200 : 503).json(report)
})
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

// Repairs drifted webhooks every 5 minutes, on every instance at once: an account another
// instance is working on is skipped. The demo also asks for a run (a message).
async function reconcile() {
  const report = await subscriptions.reconcile()
  if (report.created + report.deleted > 0 || report.failed.length > 0)
    console.log(
      `[${config.instance}] reconcile: ${JSON.stringify({ ...report, accounts: undefined })}`,
    )
  return report
}
setInterval(() => void reconcile().catch(() => {}), 5 * 60_000).unref()
process.on('message', (message: { type?: string }) => {
  if (message?.type !== 'reconcile') return
  void reconcile().then(
    (report) => process.send?.({ type: 'reconciled', report: { ...report, accounts: undefined } }),
    (error: Error) => process.send?.({ type: 'reconciled', error: error.message }),
  )
})
