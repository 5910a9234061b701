// The worker process: runs the handlers of queued deliveries, with retries.
import './telemetry.js'
import { createWebhookWorker } from '@scheduling-kit/bullmq'
import { schedulingWebhooks } from '@scheduling-kit/express'
import { Redis } from 'ioredis'
import { fromEnv } from './config.js'

const config = fromEnv()
const redis = new Redis(config.redisUrl)

// The same handlers the app would register; the worker runs them through `.handler`. It verifies
// nothing (the app did, before it queued the delivery): no secret, no subscriptions.
const webhooks = schedulingWebhooks({
  verify: false,
  onAny: async (event, { account }) => {
    // The app's work for the event; here, a list the demo reads (one per connected account's
    // deliveries, which name their account).
    if (account === undefined) await redis.rpush(`${config.prefix}handled`, event.id)
    else await redis.rpush(`${config.prefix}handled-accounts`, `${account} ${event.id}`)
  },
})
const worker = createWebhookWorker({
  handler: webhooks.handler,
  connection: { url: config.redisUrl },
  queueName: config.queueName,
  concurrency: 16,
})
await worker.ready()
process.send?.({ type: 'ready' })
