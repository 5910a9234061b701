// The queue behind pgbouncer in transaction mode (each statement may run on another server
// connection: no session state survives): the whole queue battery passes through it.
import { type LocalBouncer, startPgbouncer } from '@scheduling-kit/conformance'
import { type QueueKit, runWebhookQueueConformance } from '@scheduling-kit/testing'
import type pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { createPostgresQueue, createPostgresWorker } from '../src/index.js'
import { DATABASE_URL, freshSchema, newPool, quiet, unreachableQueue } from './helpers.js'

let bouncer: LocalBouncer
let pool: pg.Pool
beforeAll(async () => {
  bouncer = await startPgbouncer(DATABASE_URL)
  pool = newPool(bouncer.url)
}, 180_000)
afterAll(async () => {
  await pool?.end()
  await bouncer?.stop()
})

const kit: QueueKit = {
  create: async ({ attempts, backoffMs }) => {
    const schema = freshSchema('sk_pgq_bouncer')
    const queue = createPostgresQueue({ pool, schema, attempts, backoffMs, logger: quiet })
    await queue.ready()
    return {
      queue,
      worker: async (o) => {
        const worker = createPostgresWorker({ pool, schema, logger: quiet, ...o })
        await worker.ready()
        return worker
      },
      cleanup: async () => void (await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
    }
  },
  unreachable: unreachableQueue,
}

runWebhookQueueConformance(kit, {
  describe,
  it,
  name: 'createPostgresQueue behind pgbouncer (transaction mode): WebhookQueue conformance',
})
