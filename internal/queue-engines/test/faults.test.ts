// Each engine with PostgreSQL crashed mid-run: a server of the test's own, stopped at once
// (`-m immediate`) while deliveries arrive and the worker runs them, started again a second
// later. Deliveries refused meanwhile are sent again, as the service retries them. Counted:
// deliveries never run, and second runs (a crash between a handler's end and its record may
// cause one: reported, not a loss).
import { randomBytes } from 'node:crypto'
import { createDeliveryLedger, createWebhookHandler } from '@scheduling-kit/core'
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { bullmqPostgresEngine, pgBossEngine } from '../src/index.js'
import {
  acknowledge,
  ownPostgres,
  payloadId,
  RECOVER_MS,
  runsOf,
  SECRET,
  startWorker,
} from './storm-helpers.js'

const COUNT = Number(process.env.FAULT_DELIVERIES ?? 300)
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

describe.each([
  ['pg-boss', pgBossEngine],
  ['bullmq', bullmqPostgresEngine],
] as const)('%s: PostgreSQL crashed mid-run', (engine, make) => {
  it(`${COUNT} deliveries, the database crashed and started again while they arrive and run: none lost`, async () => {
    const server = await ownPostgres()
    const pool = new pg.Pool({ connectionString: server.url, max: 8 })
    pool.on('error', () => {})
    const run = randomBytes(3).toString('hex')
    const schema = `sk_fault_${run}`
    let worker: Awaited<ReturnType<typeof startWorker>> | undefined
    let close: () => Promise<void> = async () => {}
    try {
      await migrate(pool, { schema })
      await pool.query(`CREATE TABLE ${schema}.storm_runs (id text, pid int)`)
      await pool.query(`CREATE TABLE ${schema}.storm_failed (id text PRIMARY KEY)`)
      const queued = await make({
        connectionString: server.url,
        schema: `${schema}_engine`,
        queueName: 'hooks',
        attempts: 10,
        backoffMs: 1_000,
        recoverMs: RECOVER_MS,
      })
      close = () => queued.queue.close()
      const handler = createWebhookHandler({
        secret: SECRET,
        queue: queued.queue,
        ledger: createDeliveryLedger({
          store: new PostgresLedgerStore({ pool, schema }),
          logger: quiet,
        }),
        logger: quiet,
      })
      worker = await startWorker(engine, schema, server.url)
      const ids = Array.from({ length: COUNT }, (_, n) => payloadId(n, run))
      const crash = (async () => {
        await new Promise((r) => setTimeout(r, 150))
        await server.crashAndRestart(1_000)
      })()
      const refused = await acknowledge(handler, ids, 8)
      await crash
      const { rows, tail } = await runsOf(pool, schema, COUNT, 90_000)
      const twice = rows.filter((r) => r.pids.length > 1).length
      console.log(
        `${engine}, PostgreSQL crashed: ${COUNT} deliveries (${refused} refused while it was down, sent again): lost ${COUNT - rows.length}, run twice ${twice}, all run ${tail} ms after the last was taken`,
      )
      expect(COUNT - rows.length, 'lost').toBe(0)
    } finally {
      worker?.kill('SIGKILL')
      await close().catch(() => {})
      await pool.end().catch(() => {})
      server.stop()
    }
  })
})
