import { createPostgresQueue, createPostgresWorker } from '@scheduling-kit/postgres-queue'
import pg from 'pg'
import type { Engine, EngineOptions } from './engine.js'

/**
 * pg-boss 12 as @scheduling-kit/postgres-queue ships it: the package itself, on a pool of its
 * own. Its worker runs jobs through the ledger as the package does (not through `runJob`).
 */
export async function postgresQueueEngine(options: EngineOptions): Promise<Engine> {
  const pools: pg.Pool[] = []
  const pool = () => {
    const made = new pg.Pool({
      connectionString: options.connectionString,
      max: 10,
      connectionTimeoutMillis: 2_000,
    })
    made.on('error', () => {})
    pools.push(made)
    return made
  }
  const quiet = { warn() {}, error() {} }
  const queuePool = pool()
  const queue = createPostgresQueue({
    pool: queuePool,
    schema: options.schema,
    queueName: options.queueName,
    attempts: options.attempts,
    backoffMs: options.backoffMs,
    logger: quiet,
  })
  // Started when it can be: unreachable at first is how the battery's 503 case is made.
  await Promise.race([queue.ready(), new Promise((r) => setTimeout(r, 3_000))])
  return {
    async pending() {
      const { rows } = await queuePool.query(
        `SELECT count(*)::int AS n FROM ${options.schema}.job WHERE name = $1 AND state IN ('created', 'retry', 'active')`,
        [options.queueName],
      )
      return (rows as { n: number }[])[0]!.n
    },
    queue: {
      enqueue: queue.enqueue,
      close: async () => {
        await queue.close()
        await Promise.all(pools.map((p) => p.end().catch(() => {})))
      },
    },
    async worker(worker) {
      const made = createPostgresWorker({
        pool: pool(),
        schema: options.schema,
        queueName: options.queueName,
        handler: worker.handler,
        ...(worker.ledger === undefined ? {} : { ledger: worker.ledger }),
        concurrency: worker.concurrency ?? 1,
        logger: quiet,
      })
      await made.ready()
      return made
    },
  }
}
