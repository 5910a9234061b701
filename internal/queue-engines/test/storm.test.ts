// Each engine through the storm of round 3, on PostgreSQL: deliveries acknowledged through the
// webhook handler (200 once the job is stored), a worker process failing 30% of first attempts
// and SIGKILLed at random instants, started again each time. Counted: deliveries never run
// (lost), run twice, and how long the last ones took once the kills stopped.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createDeliveryLedger, createWebhookHandler } from '@scheduling-kit/core'
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import { createTestEvent, signedRequest } from '@scheduling-kit/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { bullmqPostgresEngine, pgBossEngine } from '../src/index.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const COUNT = Number(process.env.STORM_DELIVERIES ?? 300)
const KILLS = Number(process.env.STORM_KILLS ?? 3)
const RECOVER_MS = 3_000
const SECRET = 'storm-secret'
const admin = new pg.Pool({ connectionString: DATABASE_URL })
afterAll(() => admin.end())
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

function startWorker(engine: string, schema: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./storm-worker.ts', import.meta.url).pathname],
    {
      env: {
        ...process.env,
        DATABASE_URL,
        SCHEMA: schema,
        ENGINE: engine,
        RECOVER_MS: String(RECOVER_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => String(d).includes('ready') && resolve(child))
    child.on('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)))
  })
}

/** A payload id whose last hex digits decide whether its first attempt fails (30%). */
const payloadId = (n: number, run: string): `payload_${string}` =>
  `payload_${run}_${createHash('sha256').update(`${run}${n}`).digest('hex').slice(0, 8)}`

describe.each([
  ['pg-boss', pgBossEngine],
  ['bullmq', bullmqPostgresEngine],
] as const)('%s: the storm', (engine, make) => {
  it(`${COUNT} deliveries, 30% of first attempts failing, the worker SIGKILLed ${KILLS} times at random instants: none lost, none run twice but after a kill between its handler and its record`, async () => {
    const run = randomBytes(3).toString('hex')
    const schema = `sk_storm_${run}`
    await migrate(admin, { schema })
    await admin.query(`CREATE TABLE ${schema}.storm_runs (id text, pid int)`)
    await admin.query(`CREATE TABLE ${schema}.storm_failed (id text PRIMARY KEY)`)
    const engineOf = await make({
      connectionString: DATABASE_URL,
      schema: `${schema}_engine`,
      queueName: 'hooks',
      attempts: 10,
      backoffMs: 1_000,
      recoverMs: RECOVER_MS,
    })
    const handler = createWebhookHandler({
      secret: SECRET,
      queue: engineOf.queue,
      ledger: createDeliveryLedger({
        store: new PostgresLedgerStore({ pool: admin, schema }),
        logger: quiet,
      }),
      logger: quiet,
    })
    let worker = await startWorker(engine, schema)
    const killed = new Set<number>()
    const ids = Array.from({ length: COUNT }, (_, n) => payloadId(n, run))
    try {
      // The kills, at random instants while the deliveries arrive.
      const killing = (async () => {
        for (let k = 0; k < KILLS; k++) {
          await new Promise((r) => setTimeout(r, 200 + Math.random() * 800))
          killed.add(worker.pid!)
          worker.kill('SIGKILL')
          worker = await startWorker(engine, schema)
        }
      })()
      let next = 0
      const statuses: number[] = []
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < COUNT) {
            const id = ids[next++]!
            const { body, headers } = await signedRequest(
              createTestEvent('event.created', { id }),
              {
                secret: SECRET,
              },
            )
            const answer = await handler.handle({
              method: 'POST',
              path: '/webhooks/scheduling',
              headers,
              body,
            })
            statuses.push(answer!.status)
          }
        }),
      )
      await killing
      const stopped = Date.now()
      expect(statuses.every((s) => s === 200)).toBe(true)
      let ran = 0
      while (Date.now() - stopped < 90_000) {
        const { rows } = await admin.query(
          `SELECT count(DISTINCT id)::int AS n FROM ${schema}.storm_runs`,
        )
        ran = rows[0].n
        if (ran === COUNT) break
        await new Promise((r) => setTimeout(r, 250))
      }
      const tail = Date.now() - stopped
      const { rows } = await admin.query<{ id: string; pids: number[] }>(
        `SELECT id, array_agg(pid ORDER BY ctid) AS pids FROM ${schema}.storm_runs GROUP BY id`,
      )
      // A second run is the at-least-once window: a worker killed after its handler ended and
      // before the ledger recorded it. Any other is a fault: an earlier run by a process that
      // lived on.
      const twice = rows.filter((r) => r.pids.length > 1)
      const unexplained = twice.filter((r) => r.pids.slice(0, -1).some((pid) => !killed.has(pid)))
      console.log(
        `${engine}: ${COUNT} deliveries, ${KILLS} kills: lost ${COUNT - rows.length}, run twice ${twice.length} (each after a kill between its handler and its record: ${twice.length - unexplained.length}), the last ran ${tail} ms after the kills stopped`,
      )
      expect(COUNT - rows.length, 'lost').toBe(0)
      expect(
        unexplained.map((r) => r.id),
        'run twice with no kill between',
      ).toEqual([])
    } finally {
      worker.kill('SIGKILL')
      await engineOf.queue.close().catch(() => {})
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.query(`DROP SCHEMA IF EXISTS ${schema}_engine CASCADE`)
    }
  })
})
