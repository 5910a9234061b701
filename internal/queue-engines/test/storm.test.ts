// Each engine through the storm of round 3, on PostgreSQL: deliveries acknowledged through the
// webhook handler (200 once the job is stored), a worker process failing 30% of first attempts
// and SIGKILLed at random instants, started again each time. Counted: deliveries never run
// (lost), run twice, and how long the last ones took once the kills stopped.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { bullmqPostgresEngine, pgBossEngine, postgresQueueEngine } from '../src/index.js'
import {
  acknowledge,
  payloadId,
  runsOf,
  startWorker,
  stormApp,
  unexplained,
} from './storm-helpers.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const COUNT = Number(process.env.STORM_DELIVERIES ?? 300)
const KILLS = Number(process.env.STORM_KILLS ?? 3)
const admin = new pg.Pool({ connectionString: DATABASE_URL })
afterAll(() => admin.end())

describe.each([
  ['postgres-queue', postgresQueueEngine],
  ['pg-boss', pgBossEngine],
  ['bullmq', bullmqPostgresEngine],
] as const)('%s: the storm', (engine, make) => {
  it(`${COUNT} deliveries, 30% of first attempts failing, the worker SIGKILLed ${KILLS} times at random instants: none lost, none run twice but after a kill between its handler and its record`, async () => {
    const run = randomBytes(3).toString('hex')
    const schema = `sk_storm_${run}`
    const app = await stormApp(admin, DATABASE_URL, make, schema)
    let worker = await startWorker(engine, schema, DATABASE_URL)
    const killed = new Set<number>()
    const ids = Array.from({ length: COUNT }, (_, n) => payloadId(n, run))
    try {
      // The kills, at random instants while the deliveries arrive.
      const killing = (async () => {
        for (let k = 0; k < KILLS; k++) {
          await new Promise((r) => setTimeout(r, 200 + Math.random() * 800))
          killed.add(worker.pid!)
          worker.kill('SIGKILL')
          worker = await startWorker(engine, schema, DATABASE_URL)
        }
      })()
      const refused = await acknowledge(app.handler, ids, 16)
      await killing
      // The database stayed up: every delivery was taken on its first sending.
      expect(refused).toBe(0)
      const { rows, tail } = await runsOf(admin, schema, COUNT, 90_000)
      // A second run is the at-least-once window: a worker killed after its handler ended and
      // before the ledger recorded it. Any other is a fault: an earlier run by a process that
      // lived on.
      const twice = rows.filter((r) => r.pids.length > 1)
      const faults = unexplained(rows, killed)
      console.log(
        `${engine}: ${COUNT} deliveries, ${KILLS} kills: lost ${COUNT - rows.length}, run twice ${twice.length} (each after a kill between its handler and its record: ${twice.length - faults.length}), the last ran ${tail} ms after the kills stopped`,
      )
      expect(COUNT - rows.length, 'lost').toBe(0)
      expect(
        faults.map((r) => r.id),
        'run twice with no kill between',
      ).toEqual([])
    } finally {
      worker.kill('SIGKILL')
      await app.drop()
    }
  })
})
