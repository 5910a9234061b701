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
  HealthProblem,
  healthReport,
  inJobSpan,
  type QueuedRunSettings,
  runCheck,
  runQueued,
  serverText,
  type WorkerScheduling,
  wholeNumber,
  workerParts,
} from '@scheduling-kit/core/queue'
import { RedisDedupeStore, redisHealth } from '@scheduling-kit/redis'
import { DelayedError, type Job, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { type ConnectionInput, ownClient } from './connection.js'
import { checkQueueName, type WebhookJobData } from './job.js'
import type { BullMQWebhookQueue } from './queue.js'

export interface BullMQWorkerOptions {
  /**
   * `createScheduling`'s object, with a `createBullMQQueue` queue: the worker takes the queue's
   * connection, name and prefix, the ledger, and runs the handlers of `scheduling.webhooks`
   * (or of `handler`). Then those are not given here again.
   */
  scheduling?: WorkerScheduling
  /**
   * What runs the handlers: the handler of `createWebhookHandler`, or an adapter middleware's
   * `.handler`. Default with `scheduling`: `scheduling.webhooks`.
   */
  handler?: Pick<WebhookHandler, 'dispatch'>
  /** Redis: ioredis options or a client (duplicated, so its settings are not changed). Not with `scheduling`. */
  connection?: ConnectionInput
  /** Default `scheduling-webhooks`: the queue's. Not with `scheduling`. */
  queueName?: string
  /** BullMQ key prefix. Default BullMQ's (`bull`); the queue's. Not with `scheduling`. */
  prefix?: string
  /** Jobs handled at once by this worker. Default 1. */
  concurrency?: number
  /**
   * Marks jobs handled, so none runs twice: after a worker died between its handler's end and
   * BullMQ's record of it, or a job whose lock was lost while it ran long. Default a
   * `RedisDedupeStore` on the worker's connection; `false` turns it off (at-least-once).
   */
  dedupe?: DedupeStore | false
  /**
   * The delivery ledger the webhook handler records in (`createDeliveryLedger`): each job's
   * outcome is written there, it is the worker's dedupe record then (`dedupe` unused), and a
   * job that fails its last attempt is a dead letter there (`onDeadLetter`), replayable.
   * Not with `scheduling`, whose ledger it is.
   */
  ledger?: DeliveryRecord
  /**
   * How long a job's claim lasts if its worker dies (a job restarted after a crash waits for
   * it). Renewed every third of it while the handler runs (with a store that has `extend`, as
   * the default has), so it cannot lapse under a long handler. Default 10 000: no longer than
   * `lockDuration`, so a job whose worker was killed runs again as soon as it is found stalled.
   */
  claimMs?: number
  /**
   * How many times a job may be found stalled (its worker died or hung past `lockDuration`)
   * and started again before BullMQ fails it. Every stalled job here was answered 200 to the
   * service, which will not send it again: default 1 000, where BullMQ's own is 1.
   */
  maxStalledCount?: number
  /**
   * BullMQ's job lock, in ms: a worker silent this long is presumed dead and its jobs retried
   * (BullMQ renews it every half of it while a job runs). Default 10 000 (BullMQ's: 30 000):
   * with `stalledInterval`, a killed worker's job runs again within about 15 s.
   */
  lockDuration?: number
  /** How often stalled jobs are looked for, in ms. Default 5 000 (BullMQ's: 30 000). */
  stalledInterval?: number
  /** Told of worker errors and of jobs that failed (with the attempt). Default the console. */
  logger?: Pick<Logger, 'warn' | 'error'>
}

/** The worker `createBullMQWorker` returns: BullMQ's `Worker` and a `close()`. */
export interface BullMQWorker {
  readonly worker: Worker<WebhookJobData>
  /** Resolves once connected to Redis. */
  ready(): Promise<void>
  /** Whether the worker takes jobs: running, its Redis connected and answering `PING`. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** Stops taking jobs, waits for those running, and disconnects. */
  close(): Promise<void>
}

/** How long a job waits before looking again at a claim another attempt holds, in ms. */
const CLAIMED_ELSEWHERE_DELAY_MS = 1_000

function positive(name: string, value: number | undefined, fallback: number): number {
  return wholeNumber('createBullMQWorker', name, value, fallback)
}

/** The claims a job runs under: in Redis, under the queue's own keys (`<prefix>:<queue>:dedupe:<job id>`). */
function jobClaims(client: Redis, prefix: string, claimMs: number): RedisDedupeStore {
  return new RedisDedupeStore({
    client,
    prefix,
    leaseMs: claimMs,
    ttlMs: 7 * 24 * 60 * 60_000,
    logger: false,
  })
}

/** Runs one job through the delivery record; a job held elsewhere is looked at again later. */
async function runJob(
  settings: QueuedRunSettings,
  job: Job<WebhookJobData>,
  token?: string,
): Promise<string> {
  const outcome = await runQueued(
    settings,
    job.data,
    job.id ?? job.data.event.id,
    job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
  )
  if (outcome === 'ran') return 'handled'
  if (outcome !== 'busy') return `already ${outcome}`
  // Another attempt holds it (a worker that died mid-job, until its claim lapses), or its
  // Event runs elsewhere: look again later, without spending an attempt.
  await job.moveToDelayed(Date.now() + CLAIMED_ELSEWHERE_DELAY_MS, token)
  throw new DelayedError()
}

/** Logs the worker's errors and each failed attempt (a delay for a job held elsewhere is none). */
function logFailures(
  worker: Worker<WebhookJobData>,
  log: Pick<Logger, 'error' | 'warn'>,
  who: string,
): void {
  worker.on('error', (error) => log.error(`${who}: ${error.message}`))
  worker.on('failed', (job, error) => {
    if (job === undefined || error instanceof DelayedError) return
    const { type, id } = job.data.event
    log.warn(
      `${who}: ${serverText(String(type), 100)} (${serverText(String(id), 100)}) failed on attempt ${job.attemptsMade} of ${job.opts.attempts ?? 1}: ${error.message}`,
    )
  })
}

/** Whether the worker runs and its Redis answers. */
async function workerHealth(
  worker: Worker<WebhookJobData>,
  client: Redis,
  healthOptions: HealthOptions | undefined,
): Promise<HealthReport> {
  const running = await runCheck(
    'worker',
    () => {
      if (!worker.isRunning()) throw new HealthProblem('not running (closed, or not started)')
      return undefined
    },
    healthOptions?.timeoutMs,
  )
  const redis = await redisHealth(client, healthOptions)
  return healthReport([running, ...redis.checks])
}

/**
 * Runs `handler.dispatch` for each queued delivery, with BullMQ's retries and exponential
 * backoff (set on the queue: `attempts`, `backoffMs`); jobs that used every attempt are kept
 * as failed for inspection (`worker.queue.getFailed()`, `job.retry()`).
 *
 * @example
 * ```ts
 * // worker.ts, its own process: the app's createScheduling({ ..., queue: createBullMQQueue(...) })
 * scheduling.webhooks.on('event.created', saveBooking)
 * createBullMQWorker({ scheduling, concurrency: 8 })
 * // or, piece by piece:
 * createBullMQWorker({ handler: webhooks, connection: { host: '127.0.0.1', port: 6379 } })
 * ```
 */
export function createBullMQWorker(options: BullMQWorkerOptions): BullMQWorker {
  const who = 'createBullMQWorker'
  if (options === null || typeof options !== 'object')
    throw new ConfigError(`${who}: pass the options object ({ scheduling }).`)
  const parts = workerParts(
    who,
    options,
    ['connection', 'queueName', 'prefix'],
    (queue) =>
      queue.messaging?.system === 'bullmq' ? (queue as BullMQWebhookQueue).settings : undefined,
    'createBullMQQueue',
  )
  const where = parts.settings ?? options
  const name = checkQueueName(who, where.queueName)
  const log = options.logger ?? consoleLogger
  const { handler, ledger } = parts
  // Blocking commands wait for jobs: no retry limit per request on this connection (BullMQ's rule).
  const client = ownClient(who, where.connection as ConnectionInput, { maxRetriesPerRequest: null })
  client.on('error', () => {})
  const claimMs = positive('claimMs', options.claimMs, 10_000)
  const dedupe =
    options.dedupe === false
      ? undefined
      : (options.dedupe ?? jobClaims(client, `${where.prefix ?? 'bull'}:${name}:`, claimMs))
  const settings: QueuedRunSettings = { handler, ledger, dedupe, claimMs }
  const run = (job: Job<WebhookJobData>, token?: string) => runJob(settings, job, token)

  // Each job in its consumer span, continuing the delivery's trace (`process <queue>`).
  const traced = (job: Job<WebhookJobData>, token?: string) =>
    inJobSpan(
      {
        system: 'bullmq',
        destination: name,
        messageId: job.id,
        attemptsMade: job.attemptsMade,
        event: job.data.event,
        trace: job.data.trace,
      },
      () => run(job, token),
    )
  const worker = new Worker<WebhookJobData>(name, traced, {
    connection: client,
    prefix: where.prefix,
    concurrency: positive('concurrency', options.concurrency, 1),
    lockDuration: positive('lockDuration', options.lockDuration, 10_000),
    stalledInterval: positive('stalledInterval', options.stalledInterval, 5_000),
    maxStalledCount: positive('maxStalledCount', options.maxStalledCount, 1_000),
  })
  logFailures(worker, log, who)
  return {
    worker,
    ready: () => worker.waitUntilReady().then(() => {}),
    health: (healthOptions) => workerHealth(worker, client, healthOptions),
    async close() {
      await worker.close()
      client.disconnect()
    },
  }
}

/**
 * `createBullMQWorker` under its first name, kept so that apps written against it keep working:
 * the same function. New code uses `createBullMQWorker`, named like `createPostgresWorker`.
 */
export const createWebhookWorker: typeof createBullMQWorker = createBullMQWorker
/** `BullMQWorker` under its first name. */
export type WebhookWorker = BullMQWorker
/** `BullMQWorkerOptions` under its first name. */
export type WebhookWorkerOptions = BullMQWorkerOptions
