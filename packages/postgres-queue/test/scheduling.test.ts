// A PostgreSQL-only app configured once: createScheduling on postgresStores (ledger included)
// and createPostgresQueue, the worker given the same object, naming its pool and schema nowhere.
import { runConfiguredOnce } from '@scheduling-kit/conformance'
import { migrate, postgresStores } from '@scheduling-kit/postgres'
import { afterAll, beforeAll } from 'vitest'
import { createPostgresQueue, createPostgresWorker } from '../src/index.js'
import { freshSchema, newPool, quiet } from './helpers.js'

const pool = newPool()
const schema = freshSchema('sk_once')
const dropped: string[] = [schema]
beforeAll(() => migrate(pool, { schema }))
afterAll(async () => {
  for (const name of dropped) await pool.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)
  await pool.end()
})

runConfiguredOnce({
  stores: () => postgresStores({ pool, schema }),
  async queue() {
    const queueSchema = freshSchema('sk_once_q')
    dropped.push(queueSchema)
    const queue = createPostgresQueue({
      pool,
      schema: queueSchema,
      attempts: 3,
      backoffMs: 1_000,
      logger: quiet,
    })
    await queue.ready()
    return queue
  },
  worker: (options) => createPostgresWorker({ logger: quiet, ...options }),
  queueOption: { pool },
  queueMaker: 'createPostgresQueue',
})
