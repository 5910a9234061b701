// The queue through the shared queue battery (the one @scheduling-kit/bullmq passes), each test
// on a schema of its own: written grouped (the default) and one job a statement.
import { type QueueKit, runWebhookQueueConformance } from '@scheduling-kit/testing'
import { afterAll, describe, it } from 'vitest'
import { createPostgresQueue, createPostgresWorker } from '../src/index.js'
import { freshSchema, newPool, quiet, unreachableQueue } from './helpers.js'

const pool = newPool()
afterAll(() => pool.end())

function kit(batchSize: number, orderByEvent = false): QueueKit {
  return {
    create: async ({ attempts, backoffMs }) => {
      const schema = freshSchema()
      const queue = createPostgresQueue({
        pool,
        schema,
        attempts,
        backoffMs,
        batchSize,
        orderByEvent,
        logger: quiet,
      })
      await queue.ready()
      return {
        queue,
        worker: async (o) => {
          const worker = createPostgresWorker({ pool, schema, logger: quiet, ...o })
          await worker.ready()
          return worker
        },
        cleanup: async () => {
          await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        },
      }
    },
    unreachable: unreachableQueue,
  }
}

runWebhookQueueConformance(kit(64), {
  describe,
  it,
  name: 'createPostgresQueue: WebhookQueue conformance',
})
runWebhookQueueConformance(kit(1), {
  describe,
  it,
  name: 'createPostgresQueue, batchSize 1: WebhookQueue conformance',
})
runWebhookQueueConformance(kit(64, true), {
  describe,
  it,
  name: 'createPostgresQueue, orderByEvent: WebhookQueue conformance',
})
