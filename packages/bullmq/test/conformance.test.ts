// The shared queue battery (`runWebhookQueueConformance`) against BullMQ on Redis: each test on
// a queue of its own, its workers on their own connections.
import { runWebhookQueueConformance } from '@scheduling-kit/testing'
import { describe, it } from 'vitest'
import { createBullMQQueue, createWebhookWorker } from '../src/index.js'
import { connection, freePort, uniqueQueue } from './helpers.js'

const quiet = { warn() {}, error() {} }

runWebhookQueueConformance(
  {
    create: async ({ attempts, backoffMs }) => {
      const queueName = uniqueQueue('conformance')
      const queue = createBullMQQueue({ connection, queueName, attempts, backoffMs, logger: false })
      return {
        queue,
        worker: async ({ handler, ledger, concurrency }) => {
          const worker = createWebhookWorker({
            handler,
            connection,
            queueName,
            logger: quiet,
            ...(ledger === undefined ? {} : { ledger }),
            ...(concurrency === undefined ? {} : { concurrency }),
          })
          await worker.ready()
          return worker
        },
        cleanup: () => queue.queue.obliterate({ force: true }),
      }
    },
    unreachable: async () =>
      createBullMQQueue({ connection: { port: await freePort() }, logger: false }),
  },
  { describe, it, name: 'BullMQ: WebhookQueue conformance' },
)
