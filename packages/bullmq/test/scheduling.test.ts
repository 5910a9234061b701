// A Redis app configured once: createScheduling on redisStores (ledger included) and
// createBullMQQueue, the worker given the same object, naming its connection nowhere.
import { runConfiguredOnce } from '@scheduling-kit/conformance'
import { redisStores } from '@scheduling-kit/redis'
import { createBullMQQueue, createBullMQWorker } from '../src/index.js'
import { connection, later, redis, uniqueQueue } from './helpers.js'

const quiet = { debug() {}, info() {}, warn() {}, error() {} }
const prefix = `${uniqueQueue('once')}:`
const client = redis()

runConfiguredOnce({
  stores: () => redisStores({ client, prefix, logger: false }),
  async queue() {
    const queue = createBullMQQueue({
      connection,
      queueName: uniqueQueue('once'),
      attempts: 3,
      backoffMs: 20,
      logger: false,
    })
    later(() => queue.close())
    await queue.ready()
    return queue
  },
  worker: (options) => createBullMQWorker({ logger: quiet, ...options }),
  queueOption: { connection },
  queueMaker: 'createBullMQQueue',
})
