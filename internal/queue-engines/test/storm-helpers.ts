// What the storm and the fault tests share: the worker process, the deliveries' ids, the
// handler that acknowledges them (as the service would retry a refused one), and the count.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  createDeliveryLedger,
  createWebhookHandler,
  type WebhookHandler,
} from '@scheduling-kit/core'
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import { createTestEvent, signedRequest } from '@scheduling-kit/testing'
import type pg from 'pg'
import type { Engine, EngineOptions } from '../src/index.js'

export const SECRET = 'storm-secret'
export const RECOVER_MS = 3_000

/** A worker process of `engine` on `schema`, once it is ready. */
export function startWorker(engine: string, schema: string, url: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./storm-worker.ts', import.meta.url).pathname],
    {
      env: {
        ...process.env,
        DATABASE_URL: url,
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

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * A run's tables on `pool` (the ledger's, and the runs the worker records), the engine's queue
 * on its own schema, and the webhook handler that acknowledges into it with the ledger.
 */
export async function stormApp(
  pool: pg.Pool,
  url: string,
  make: (options: EngineOptions) => Promise<Engine>,
  schema: string,
): Promise<{ engine: Engine; handler: WebhookHandler; drop(): Promise<void> }> {
  await migrate(pool, { schema })
  await pool.query(`CREATE TABLE ${schema}.storm_runs (id text, pid int)`)
  await pool.query(`CREATE TABLE ${schema}.storm_failed (id text PRIMARY KEY)`)
  const engine = await make({
    connectionString: url,
    schema: `${schema}_engine`,
    queueName: 'hooks',
    attempts: 10,
    backoffMs: 1_000,
    recoverMs: RECOVER_MS,
  })
  const handler = createWebhookHandler({
    secret: SECRET,
    queue: engine.queue,
    ledger: createDeliveryLedger({
      store: new PostgresLedgerStore({ pool, schema }),
      logger: quiet,
    }),
    logger: quiet,
  })
  return {
    engine,
    handler,
    async drop() {
      await engine.queue.close().catch(() => {})
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await pool.query(`DROP SCHEMA IF EXISTS ${schema}_engine CASCADE`)
    },
  }
}

/** A payload id whose last hex digits decide whether its first attempt fails (30%). */
export const payloadId = (n: number, run: string): `payload_${string}` =>
  `payload_${run}_${createHash('sha256').update(`${run}${n}`).digest('hex').slice(0, 8)}`

/**
 * Sends each delivery through `handler`, `concurrency` at a time, sending a refused one again
 * (as the service retries) until it is answered 200. Resolves to how many were refused first.
 */
export async function acknowledge(
  handler: WebhookHandler,
  ids: string[],
  concurrency: number,
): Promise<number> {
  let next = 0
  let refused = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as `payload_${string}`
        const { body, headers } = await signedRequest(createTestEvent('event.created', { id }), {
          secret: SECRET,
        })
        for (let tries = 0; ; tries++) {
          const answer = await handler.handle({
            method: 'POST',
            path: '/webhooks/scheduling',
            headers,
            body,
          })
          if (answer?.status === 200) break
          refused++
          if (tries > 600) throw new Error(`${id} was never taken`)
          await new Promise((r) => setTimeout(r, 100))
        }
      }
    }),
  )
  return refused
}

/** Waits up to `ms` for every id to have run; then each id's runs, by the processes that ran it. */
export async function runsOf(
  pool: pg.Pool,
  schema: string,
  count: number,
  ms: number,
): Promise<{ rows: { id: string; pids: number[] }[]; tail: number }> {
  const started = Date.now()
  while (Date.now() - started < ms) {
    const { rows } = await pool
      .query(`SELECT count(DISTINCT id)::int AS n FROM ${schema}.storm_runs`)
      .catch(() => ({ rows: [{ n: -1 }] }))
    if (rows[0].n === count) break
    await new Promise((r) => setTimeout(r, 250))
  }
  const tail = Date.now() - started
  const { rows } = await pool.query<{ id: string; pids: number[] }>(
    `SELECT id, array_agg(pid ORDER BY ctid) AS pids FROM ${schema}.storm_runs GROUP BY id`,
  )
  return { rows, tail }
}

/** Runs by a process that lived on, before another run of the same delivery: a fault. */
export const unexplained = (rows: { id: string; pids: number[] }[], killed: Set<number>) =>
  rows.filter((r) => r.pids.length > 1 && r.pids.slice(0, -1).some((pid) => !killed.has(pid)))
