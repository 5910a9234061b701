// The PostgreSQL queue's half of the queue bench, run on Node 22 (pg-boss 12's minimum) by
// queues.ts: prints its rows and ratios as one JSON line.
import { createPostgresQueue, type PostgresWebhookQueue } from '@scheduling-kit/postgres-queue'
import pg from 'pg'
import { compareQueue } from './queue-drive.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 })
const quiet = { warn() {} }
const { rows, ratio } = await compareQueue(
  async (run) => {
    const schema = `sk_bench_q_${run}`
    const made: PostgresWebhookQueue[] = []
    const queue = async (batchSize: number) => {
      const q = createPostgresQueue({ pool, schema, batchSize, logger: quiet })
      await q.ready()
      made.push(q)
      return q
    }
    const first = await queue(1)
    return {
      queue: async (batchSize) => (batchSize === 1 ? first : queue(batchSize)),
      rawAdd: async (id, data) => {
        await first.boss.send('scheduling-webhooks', data, { id })
      },
      rawBulk: async (jobs) => {
        await first.boss.insert('scheduling-webhooks', jobs)
      },
      cleanup: async () => {
        for (const q of made) await q.close()
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      },
    }
  },
  {
    raw: 'raw pg-boss `send`',
    bulk: 'raw pg-boss `insert`',
    grouped: 'handle() + queue, batchSize 64 (the default)',
    single: 'handle() + queue, batchSize 1',
  },
  64,
)
await pool.end()
console.log(JSON.stringify({ rows, ratio: [...ratio] }))
