// The shared queue battery (`runWebhookQueueConformance`) against BullMQ on Redis: each test on
// a queue of its own, its workers on their own connections.
import { queueTraceProbe } from '@scheduling-kit/conformance/otel'
import { useOpenTelemetry } from '@scheduling-kit/core'
import { type QueueUnderTest, runWebhookQueueConformance } from '@scheduling-kit/testing'
import { describe, it } from 'vitest'
import { createBullMQQueue, createBullMQWorker } from '../src/index.js'
import { connection, freePort, uniqueQueue } from './helpers.js'

const quiet = { warn() {}, error() {} }

/** The kit over BullMQ queues made with `extra` options. */
function bullmqKit(extra: { batchSize?: number }) {
  return {
    create: async ({ attempts, backoffMs }: { attempts: number; backoffMs: number }) => {
      const queueName = uniqueQueue('conformance')
      const queue = createBullMQQueue({
        connection,
        queueName,
        attempts,
        backoffMs,
        logger: false,
        ...extra,
      })
      return {
        queue,
        worker: async ({
          handler,
          ledger,
          concurrency,
        }: Parameters<QueueUnderTest['worker']>[0]) => {
          const worker = createBullMQWorker({
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
      createBullMQQueue({ connection: { port: await freePort() }, logger: false, ...extra }),
    traces: () => queueTraceProbe(useOpenTelemetry),
  }
}

runWebhookQueueConformance(bullmqKit({}), {
  describe,
  it,
  name: 'BullMQ: WebhookQueue conformance',
})

// Grouped writes (addBulk): the same promises, each delivery answered once its group is stored.
runWebhookQueueConformance(bullmqKit({ batchSize: 64 }), {
  describe,
  it,
  name: 'BullMQ with batchSize 64: WebhookQueue conformance',
})
