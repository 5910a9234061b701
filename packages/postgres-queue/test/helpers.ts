// What the tests share: the database, a schema of each test's own, a closed port.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { queueTraceProbe } from '@scheduling-kit/conformance/otel'
import { useOpenTelemetry } from '@scheduling-kit/core'
import type { QueueKit } from '@scheduling-kit/testing'
import pg from 'pg'
import {
  createPostgresQueue,
  createPostgresWorker,
  type PostgresQueueOptions,
} from '../src/index.js'

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** A fresh schema name: each test its own queue tables. */
export const freshSchema = (prefix = 'sk_pgq') => `${prefix}_${randomBytes(4).toString('hex')}`

export function newPool(url = DATABASE_URL, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 2_000 })
  // An idle client's error (the server went away) would end the process without a listener.
  pool.on('error', () => {})
  return pool
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

export const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** A queue on a pool whose server cannot be reached (a closed port): the kits' 503 case. */
export async function unreachableQueue() {
  const down = newPool(`postgres://postgres@127.0.0.1:${await closedPort()}/test`)
  const queue = createPostgresQueue({ pool: down, logger: quiet })
  return {
    ...queue,
    close: async () => {
      await queue.close()
      await down.end()
    },
  }
}

/** The queue battery's kit on the pool `poolOf` gives: each queue on a schema of its own, dropped after. */
export function queueKit(
  poolOf: () => pg.Pool,
  options: Pick<PostgresQueueOptions, 'batchSize' | 'orderByEvent'> = {},
): QueueKit {
  return {
    create: async ({ attempts, backoffMs }) => {
      const pool = poolOf()
      const schema = freshSchema()
      const queue = createPostgresQueue({
        pool,
        schema,
        attempts,
        backoffMs,
        logger: quiet,
        ...options,
      })
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
    traces: () => queueTraceProbe(useOpenTelemetry),
  }
}
