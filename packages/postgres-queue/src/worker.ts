import {
  ConfigError,
  type DedupeStore,
  type HealthOptions,
  type HealthReport,
  type Logger,
  type WebhookHandler,
} from '@scheduling-kit/core'
import {
  consoleLogger,
  type DeliveryRecord,
  healthReport,
  type WorkerScheduling,
  wholeNumber,
  workerParts,
} from '@scheduling-kit/core/queue'
import { migrate as migrateTables, PostgresDedupeStore } from '@scheduling-kit/postgres'
import type { JobWithMetadata, PgBoss } from 'pg-boss'
import {
  BossStarter,
  checkNode,
  checkPool,
  newBoss,
  type QueuePool,
  startedChecks,
} from './boss.js'
import { checkQueueName, checkSchema, type PostgresJobData } from './job.js'
import { JobRun } from './job-run.js'
import type { PostgresWebhookQueue } from './queue.js'

export interface PostgresWorkerOptions {
  /**
   * `createScheduling`'s object, with a `createPostgresQueue` queue: the worker takes the
   * queue's pool, name and schema, the ledger, and runs the handlers of `scheduling.webhooks`
   * (or of `handler`). Then those are not given here again.
   */
  scheduling?: WorkerScheduling
  /**
   * What runs the handlers: the handler of `createWebhookHandler`, or an adapter middleware's
   * `.handler`. Default with `scheduling`: `scheduling.webhooks`.
   */
  handler?: Pick<WebhookHandler, 'dispatch'>
  /** The app's `pg` Pool. Not with `scheduling`. */
  pool?: QueuePool
  /** Default `scheduling-webhooks`: the queue's. Not with `scheduling`. */
  queueName?: string
  /** Default `scheduling_kit_queue`: the queue's. Not with `scheduling`. */
  schema?: string
  /** Jobs handled at once by this worker. Default 1. */
  concurrency?: number
  /** How often an idle worker looks for jobs, in ms (at least 500). Default 500. */
  pollMs?: number
  /**
   * The delivery ledger the webhook handler records in (`createDeliveryLedger`): each job's
   * outcome is written there, it is the worker's record of what ran (`dedupe` unused), and a
   * job that fails its last attempt is a dead letter there (`onDeadLetter`), replayable.
   * Not with `scheduling`, whose ledger it is.
   */
  ledger?: DeliveryRecord
  /**
   * Marks jobs handled, so none runs twice after a worker died between its handler's end and
   * pg-boss's record of it. Default a `PostgresDedupeStore` in the queue's schema (its table is
   * created on start); `false` turns it off (at-least-once).
   */
  dedupe?: DedupeStore | false
  /**
   * How long a job's dedupe claim lasts if its worker dies, in ms; renewed every third of it
   * while the job runs. Default 10 000: it lapses before pg-boss retries the job (its heartbeat,
   * `heartbeatSeconds`, 10), so a killed worker's job runs again within about 15 s.
   */
  claimMs?: number
  /** Install pg-boss's tables (and the dedupe table) when missing. Default true. */
  migrate?: boolean
  /** Told of jobs that failed (with the attempt) and of a database not reachable at start. Default the console. */
  logger?: Pick<Logger, 'warn' | 'error'>
}

/** The worker `createPostgresWorker` returns. */
export interface PostgresWorker {
  /** The pg-boss instance the worker runs on. */
  readonly boss: PgBoss
  /** Resolves once started (PostgreSQL reached, the worker polling). */
  ready(): Promise<void>
  /** Whether the worker takes jobs: started, and PostgreSQL answering. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** Stops taking jobs, waits for those running, and stops pg-boss (the pool stays the app's). */
  close(): Promise<void>
}

/**
 * Runs `handler.dispatch` for each queued delivery, with pg-boss's retries and exponential
 * backoff (set on the queue: `attempts`, `backoffMs`), heartbeats (a dead worker's job runs
 * again within `heartbeatSeconds`), and failed jobs kept (and, with a ledger, dead letters
 * there, replayable).
 *
 * @example
 * ```ts
 * // worker.ts, its own process: the app's createScheduling({ ..., queue: createPostgresQueue(...) })
 * scheduling.webhooks.on('event.created', saveBooking)
 * createPostgresWorker({ scheduling, concurrency: 8 })
 * // or, piece by piece:
 * createPostgresWorker({ handler: webhooks, pool })
 * ```
 */
export function createPostgresWorker(options: PostgresWorkerOptions): PostgresWorker {
  const who = 'createPostgresWorker'
  checkNode(who)
  if (options === null || typeof options !== 'object')
    throw new ConfigError(`${who}: pass the options object ({ scheduling }).`)
  const parts = workerParts(
    who,
    options,
    ['pool', 'queueName', 'schema'],
    (queue) =>
      queue.messaging?.system === 'pg-boss' ? (queue as PostgresWebhookQueue).settings : undefined,
    'createPostgresQueue',
  )
  const where = parts.settings ?? options
  const pool = checkPool(who, where.pool)
  const name = checkQueueName(who, where.queueName)
  const schema = checkSchema(who, where.schema)
  const concurrency = wholeNumber(who, 'concurrency', options.concurrency, 1)
  const pollMs = wholeNumber(who, 'pollMs', options.pollMs, 500, { min: 500 })
  const claimMs = wholeNumber(who, 'claimMs', options.claimMs, 10_000)
  const log = options.logger ?? consoleLogger
  const { handler, ledger } = parts
  const dedupe =
    ledger !== undefined || options.dedupe === false
      ? undefined
      : (options.dedupe ??
        new PostgresDedupeStore({
          pool: pool as never,
          schema,
          leaseMs: claimMs,
          ttlMs: 7 * 24 * 60 * 60_000,
        }))
  const ownDedupe = ledger === undefined && options.dedupe === undefined
  const migrate = options.migrate !== false
  const boss = newBoss({ pool, schema, migrate, supervise: true })

  const runs = new JobRun({ who, name, handler, ledger, dedupe, claimMs, log, boss })

  const starter = new BossStarter(
    who,
    boss,
    async () => {
      if (migrate && ownDedupe) await migrateTables(pool as never, { schema, only: ['dedupe'] })
      // The queue is the app's (createPostgresQueue) or migrate()'s to make, with its order:
      // until it exists, the worker waits for it.
      if ((await boss.getQueue(name)) === null)
        throw new Error(`the queue ${name} does not exist yet: start the app, or run migrate()`)
      // One pg-boss worker per job at once, each told to fetch again at once after a job: a
      // pg-boss worker otherwise waits its polling interval after every fetch, jobs found or
      // not, so one job a fetch would run two a second.
      for (let i = 0; i < concurrency; i++) {
        let id: string | undefined
        id = await boss.work(
          name,
          {
            batchSize: 1,
            pollingIntervalSeconds: pollMs / 1000,
            includeMetadata: true,
          } as const,
          async (found: JobWithMetadata<PostgresJobData>[]) => {
            try {
              await runs.work(found)
            } finally {
              if (id !== undefined && found.length > 0) boss.notifyWorker(id)
            }
          },
        )
      }
    },
    log,
  )

  return {
    boss,
    ready: () => starter.started(),
    health: async (healthOptions) =>
      healthReport(await startedChecks('worker', starter, pool, healthOptions)),
    close: () => starter.close(true),
  }
}
