// A worker process of the storm test: one engine's worker, with the ledger on PostgreSQL, its
// handler failing the first attempt of 30% of deliveries and recording each run it finishes.
import { createDeliveryLedger, createWebhookHandler } from '@scheduling-kit/core'
import { PostgresLedgerStore } from '@scheduling-kit/postgres'
import pg from 'pg'
import { bullmqPostgresEngine, pgBossEngine, postgresQueueEngine } from '../src/index.js'

const env = process.env as Record<string, string>
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 })
pool.on('error', () => {})
const schema = env.SCHEMA!
const ledger = createDeliveryLedger({
  store: new PostgresLedgerStore({ pool, schema }),
  leaseMs: 3_000,
  logger: { debug() {}, info() {}, warn() {}, error() {} },
})
const handler = createWebhookHandler({
  verify: false,
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  onAny: async (event) => {
    const id = event.id
    if (Number.parseInt(id.slice(-2), 16) % 10 < 3) {
      const first = await pool.query(
        `INSERT INTO ${schema}.storm_failed (id) VALUES ($1) ON CONFLICT DO NOTHING`,
        [id],
      )
      if (first.rowCount === 1) throw new Error('the first attempt fails')
    }
    await pool.query(`INSERT INTO ${schema}.storm_runs (id, pid) VALUES ($1, $2)`, [
      id,
      process.pid,
    ])
  },
})
const make = {
  'pg-boss': pgBossEngine,
  bullmq: bullmqPostgresEngine,
  'postgres-queue': postgresQueueEngine,
}[env.ENGINE!]!
const engine = await make({
  connectionString: env.DATABASE_URL!,
  schema: `${schema}_engine`,
  queueName: 'hooks',
  attempts: 10,
  backoffMs: 1_000,
  recoverMs: Number(env.RECOVER_MS),
})
await engine.worker({ handler, ledger, concurrency: 8 })
console.log('ready')
process.on('exit', (code) => {
  if (env.ENGINE_DEBUG) console.error(`worker ${process.pid} exits (${code})`)
})
