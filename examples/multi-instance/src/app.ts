// One instance of the app: every instance shares one Redis, or one PostgreSQL database
// (src/backend.ts), for the tokens (one refresh per expiry across all of them), the sign-in
// states and webhook dedupe, the durable queue, and the connected accounts' webhooks, which
// every instance reconciles on a schedule.
import './telemetry.js'
import type { AddressInfo } from 'node:net'
import { schedulingOAuth, schedulingWebhooks } from '@scheduling-kit/express'
import express from 'express'
import { fromEnv } from './config.js'
import { configure } from './scheduling.js'

const config = fromEnv()
const { scheduling, backend } = await configure(config, 10)
const subscriptions = scheduling.subscriptions!

const app = express()
app.use((_req, res, next) => {
  res.setHeader('x-instance', config.instance)
  next()
})
// The app's own webhook (one secret), and the connected accounts' (a secret each): both queue
// what they verified, recorded in the one ledger.
app.use(
  schedulingWebhooks({ ...scheduling, subscriptions: undefined, secret: config.webhookSecret }),
)
app.use(schedulingWebhooks({ ...scheduling, path: '/webhooks/accounts' }))
const oauth = schedulingOAuth({
  ...scheduling,
  // The login may reach one instance and the callback another: the state is single-use across all.
  stateStore: backend.stateStore,
})
app.use('/auth/scheduling', oauth)
// Readiness, for the load balancer: the token store, the subscriptions' store, the ledger's store
// and the queue answer. 503, saying what is wrong, until then.
app.get('/ready', async (_req, res) => {
  const report = await scheduling.health({ timeoutMs: 1_000 })
  res.status(report.ok ? 200 : 503).json(report)
})
app.get('/api/me', async (req, res, next) => {
  try {
    const key = await oauth.connectedKey(req)
    if (!key) return void res.status(401).json({ error: 'not connected' })
    res.json(await scheduling.client(key).me())
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
