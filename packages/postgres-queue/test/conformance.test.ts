// The queue through the shared queue battery (the one @scheduling-kit/bullmq passes), each test
// on a schema of its own: written grouped (the default), one job a statement, and with order
// per Event kept by the queue.
import { runWebhookQueueConformance } from '@scheduling-kit/testing'
import { afterAll, describe, it } from 'vitest'
import { newPool, queueKit } from './helpers.js'

const pool = newPool()
afterAll(() => pool.end())

runWebhookQueueConformance(
  queueKit(() => pool),
  {
    describe,
    it,
    name: 'createPostgresQueue: WebhookQueue conformance',
  },
)
runWebhookQueueConformance(
  queueKit(() => pool, { batchSize: 1 }),
  {
    describe,
    it,
    name: 'createPostgresQueue, batchSize 1: WebhookQueue conformance',
  },
)
runWebhookQueueConformance(
  queueKit(() => pool, { orderByEvent: true }),
  {
    describe,
    it,
    name: 'createPostgresQueue, orderByEvent: WebhookQueue conformance',
  },
)
