import type {
  AnyWebhookEvent,
  HealthCheck,
  HealthOptions,
  HealthReport,
  Logger,
  QueueDelivery,
  WebhookContext,
  WebhookQueue,
} from '@scheduling-kit/core'
import {
  consoleLogger,
  GroupCommit,
  HealthProblem,
  healthReport,
  jobKeyOf,
  queuedDelivery,
  runCheck,
  wholeNumber,
  withinMs,
} from '@scheduling-kit/core/queue'
import type { JobInsert, PgBoss } from 'pg-boss'
import {
  BossStarter,
  checkNode,
  checkPool,
  newBoss,
  type QueuePool,
  startedChecks,
} from './boss.js'
import { checkQueueName, checkSchema, jobIdFor, orderKeyOf, type PostgresJobData } from './job.js'
import { ensureQueue, type JobSettings, jobSettings } from './settings.js'

export interface PostgresQueueOptions extends JobSettings {
  /** The app's `pg` Pool: jobs are written through it. */
  pool: QueuePool
  /** Default `scheduling-webhooks`; the worker must use the same. */
  queueName?: string
  /** Schema of the queue's tables. Default `scheduling_kit_queue`; the worker and `migrate` must use the same. */
  schema?: string
  /** Longest an enqueue may take before the delivery is answered 503, in ms. Default 5 000. */
  timeoutMs?: number
  /**
   * Most jobs one statement writes. Deliveries that arrive while a write is under way are
   * written together by the next one, in one statement (one transaction), each answered 200
   * only once the statement that carried its job committed. Default 64; 1 writes each alone.
   */
  batchSize?: number
  /**
   * Keep order per Event in the queue itself (pg-boss's `key_strict_fifo`): a change of an
   * Event is not fetched while an earlier job of the same Event is running, waiting for a retry,
   * or failed. Then no two changes of one Event run at once in any number of workers, even
   * without the ledger; with the ledger its guard still skips a change older than one applied.
   * A job that failed every attempt holds its Event's later changes until you retry or delete
   * it (`health()` counts them: `queue.blocked`). Set when the queue is first made: an existing
   * queue keeps its order (use a new `queueName`, and pass the same to `migrate()`). Default false.
   */
  orderByEvent?: boolean
  /** Install pg-boss's tables when missing (as `migrate()` does). Default true. */
  migrate?: boolean
  /** Told when PostgreSQL is not reachable at start. Default the console. */
  logger?: Pick<Logger, 'warn'>
}

/** Where a PostgreSQL queue is: its pool, its name and its schema. */
export interface PostgresQueueSettings {
  readonly pool: QueuePool
  readonly queueName: string
  readonly schema: string
}

/** The queue `createPostgresQueue` returns: a `WebhookQueue`, with pg-boss and a `close()`. */
export interface PostgresWebhookQueue extends WebhookQueue {
  /** `pg-boss` and the queue's name, for the enqueue span. */
  readonly messaging: { system: 'pg-boss'; destination: string }
  /** Whether the queue takes jobs now: started, and PostgreSQL answering. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** The pg-boss instance, to inspect jobs (`findJobs`, `getQueueStats`). */
  readonly boss: PgBoss
  /** Where the queue is: what `createPostgresWorker({ scheduling })` finds it by. */
  readonly settings: PostgresQueueSettings
  /** Resolves once started (PostgreSQL reached, the queue created). */
  ready(): Promise<void>
  close(): Promise<void>
}

/** A job as the queue inserts it. */
type JobWrite = JobInsert<PostgresJobData> & { id: string }

/** How jobs go in: grouped into one insert of up to `batchSize`. */
function jobWrites(boss: PgBoss, name: string, batchSize: number): GroupCommit<JobWrite> {
  return new GroupCommit<JobWrite>(
    async (jobs) => {
      // Two retries of one delivery in one group are one job: pg-boss refuses a batch that names
      // an id twice, and the first carries both.
      const unique = new Map(jobs.map((job) => [job.id, job]))
      await boss.insert(name, [...unique.values()])
    },
    batchSize,
    // Grouped: one write under way, while the next group gathers everything that arrives
    // meanwhile (measured faster than several smaller groups at once). One job a write: four
    // under way, each on a connection of the pool, else one round trip each would be the cap.
    batchSize === 1 ? 4 : 1,
  )
}

/** With `orderByEvent`: whether a job that failed every attempt holds Events back. */
function blockedCheck(
  boss: PgBoss,
  name: string,
  healthOptions: HealthOptions | undefined,
): Promise<HealthCheck> {
  return runCheck(
    'queue.blocked',
    async () => {
      const blocked = await boss.getBlockedKeys(name, { limit: 1_000 })
      if (blocked.length > 0)
        throw new HealthProblem(
          `${blocked.length === 1_000 ? '1 000 or more Events are' : blocked.length === 1 ? '1 Event is' : `${blocked.length} Events are`} held by a job that failed every attempt: retry or delete it (boss.retry, boss.deleteJob) to run their later changes`,
        )
      return 'no Event held by a failed job'
    },
    healthOptions?.timeoutMs,
  )
}

/**
 * A durable `WebhookQueue` on PostgreSQL alone (pg-boss 12): a delivery is answered 200 only
 * once its job is committed, and 503 at once while PostgreSQL cannot take it (the service then
 * delivers it again). Every retry of one delivery maps to one job (its id is made from the
 * dedupe key). Concurrent deliveries share one statement. Run the handlers in
 * `createPostgresWorker`.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * const queue = createPostgresQueue({ pool })
 * app.use(schedulingWebhooks({ secret, queue }))
 * ```
 */
export function createPostgresQueue(options: PostgresQueueOptions): PostgresWebhookQueue {
  const who = 'createPostgresQueue'
  checkNode(who)
  const pool = checkPool(who, options?.pool)
  const name = checkQueueName(who, options.queueName)
  const schema = checkSchema(who, options.schema)
  const timeoutMs = wholeNumber(who, 'timeoutMs', options.timeoutMs, 5_000)
  const batchSize = wholeNumber(who, 'batchSize', options.batchSize, 64)
  const perJob = jobSettings(who, options)
  const boss = newBoss({ pool, schema, migrate: options.migrate !== false, supervise: false })
  const orderByEvent = options.orderByEvent === true
  const starter = new BossStarter(
    who,
    boss,
    () => ensureQueue(boss, name, perJob, orderByEvent, { pool, schema }),
    options.logger ?? consoleLogger,
  )
  const writes = jobWrites(boss, name, batchSize)

  async function enqueue(
    event: AnyWebhookEvent,
    context: WebhookContext,
    delivery?: QueueDelivery,
  ): Promise<void> {
    const began = performance.now()
    if (starter.notStarted() !== undefined) {
      // A queue just made waits for its first start (within timeoutMs); one whose start
      // failed (PostgreSQL down) is answered 503 at once, as the service then retries.
      await withinMs(
        starter.firstAttempt(),
        timeoutMs,
        `the queue did not start within ${timeoutMs} ms`,
      )
      const refused = starter.notStarted()
      if (refused !== undefined) throw refused
    }
    const key = delivery?.key ?? event.id
    const jobKey = jobKeyOf(delivery, event.id)
    const job = {
      id: jobIdFor(jobKey),
      data: queuedDelivery(event, context, delivery),
      ...perJob,
    }
    await withinMs(
      writes.add(
        orderByEvent
          ? {
              ...job,
              // A replay is not ordered behind its own failed job (which holds its Event until
              // the replay lets it go): the ledger's hold orders it in the worker.
              singletonKey:
                delivery?.replay === undefined
                  ? orderKeyOf(event, key, context.account)
                  : `delivery:${job.id}`,
            }
          : job,
      ),
      Math.max(1, timeoutMs - (performance.now() - began)),
      `PostgreSQL did not commit the job within ${timeoutMs} ms`,
    )
  }

  return {
    boss,
    settings: { pool, queueName: name, schema },
    enqueue,
    messaging: { system: 'pg-boss', destination: name },
    ready: () => starter.started(),
    async health(healthOptions) {
      const checks = await startedChecks('queue', starter, pool, healthOptions)
      if (orderByEvent && checks.every((check) => check.ok))
        checks.push(await blockedCheck(boss, name, healthOptions))
      return healthReport(checks)
    },
    close: () => starter.close(false),
  }
}
