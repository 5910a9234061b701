import { migrate as migrateTables } from '@scheduling-kit/postgres'
import { checkPool, newBoss, type QueuePool } from './boss.js'
import { checkQueueName, checkSchema } from './job.js'
import { ensureQueue } from './settings.js'

export interface QueueMigrateOptions {
  /** Default `scheduling_kit_queue`: the queue's and the worker's. */
  schema?: string
  /** Default `scheduling-webhooks`: the queue's and the worker's. */
  queueName?: string
  /** Make the queue with order per Event (the queue's `orderByEvent`). Default false. */
  orderByEvent?: boolean
}

/**
 * Installs or upgrades the queue's tables in `schema`: pg-boss's (under its own advisory lock,
 * safe when many instances start at once), the queue, and the worker's dedupe table. The queue
 * and the worker also do it when they start, unless made with `migrate: false` (for an app
 * whose runtime role may not create tables: run this once with a role that may).
 *
 * @example
 * ```ts
 * await migrate(pool)
 * ```
 */
export async function migrate(pool: QueuePool, options: QueueMigrateOptions = {}): Promise<void> {
  const who = 'migrate'
  checkPool(who, pool)
  const schema = checkSchema(who, options.schema)
  const name = checkQueueName(who, options.queueName)
  const boss = newBoss({ pool, schema, migrate: true, supervise: false })
  await boss.start()
  try {
    await ensureQueue(boss, name, undefined, options.orderByEvent === true, { pool, schema })
    await migrateTables(pool as never, { schema, only: ['dedupe'] })
  } finally {
    await boss.stop({ graceful: false })
  }
}
