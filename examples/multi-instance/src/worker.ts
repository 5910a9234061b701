// The worker process: runs the handlers of queued deliveries, with retries.
import './telemetry.js'
import { schedulingWebhooks } from '@scheduling-kit/express'
import { workerBackend } from './backend.js'
import { fromEnv } from './config.js'

const config = fromEnv()
const backend = await workerBackend(config)

// The same handlers the app would register; the worker runs them through `.handler`. It verifies
// nothing (the app did, before it queued the delivery): no secret, no subscriptions.
const webhooks = schedulingWebhooks({
  verify: false,
  // The app's work for the event; here, a record the demo reads (connected accounts'
  // deliveries name their account).
  onAny: (event, { account }) => backend.record(event.id, account),
})
await backend.work(webhooks.handler)
process.send?.({ type: 'ready' })
