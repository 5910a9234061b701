// One worker process of the re-run bench (rerun/run.ts starts it, on Node 22): runs the
// handlers of the queue named on its command line. `hang`: the first delivery it takes never
// ends (the coordinator kills this process there); `run`: it runs every delivery. Tells the
// coordinator on stdout: `ready`, `started <payload id>`, `ran <payload id>`.
import { createBullMQWorker } from '@scheduling-kit/bullmq'
import { createDeliveryLedger, createWebhookHandler } from '@scheduling-kit/core'
import { PostgresLedgerStore } from '@scheduling-kit/postgres'
import { createPostgresWorker } from '@scheduling-kit/postgres-queue'
import pg from 'pg'

const [engine, where, mode] = process.argv.slice(2) as [string, string, 'hang' | 'run']
const say = (line: string) => process.stdout.write(`${line}\n`)
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 })
// With `+ ledger`: the worker records in the app's ledger (PostgreSQL, the queue's schema).
const ledger = engine.endsWith('+ ledger')
  ? createDeliveryLedger({ store: new PostgresLedgerStore({ pool, schema: where }) })
  : undefined
const handler = createWebhookHandler({
  ...(ledger === undefined ? {} : { ledger }),
  secret: 'rerun-bench-secret',
  onAny: async (event) => {
    if (mode === 'hang') {
      say(`started ${event.id}`)
      await new Promise(() => {})
    }
    say(`ran ${event.id}`)
  },
})
const quiet = { warn() {}, error() {} }
if (engine.startsWith('postgres-queue')) {
  const worker = createPostgresWorker({
    pool,
    schema: where,
    handler,
    ...(ledger === undefined ? {} : { ledger }),
    logger: quiet,
  })
  await worker.ready()
} else {
  const worker = createBullMQWorker({
    connection: { url: process.env.REDIS_URL },
    queueName: where,
    handler,
    logger: quiet,
  } as never)
  await worker.ready()
}
say('ready')
