import type {
  AnyWebhookEvent,
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
  jobKeyOf,
  queuedDelivery,
  wholeNumber,
  withinMs,
} from '@scheduling-kit/core/queue'
import { checkPersistence, redisHealth } from '@scheduling-kit/redis'
import { type JobsOptions, Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { type ConnectionInput, ownClient } from './connection.js'
import { checkQueueName, jobIdFor, type WebhookJobData } from './job.js'

export interface BullMQQueueOptions {
  /** Redis: ioredis options or a client (duplicated, so its settings are not changed). */
  connection: ConnectionInput
  /** Default `scheduling-webhooks`; the worker must use the same. */
  queueName?: string
  /** BullMQ key prefix. Default BullMQ's (`bull`). */
  prefix?: string
  /** Attempts per job before it is kept as failed. Default 10. */
  attempts?: number
  /** First retry delay, doubled at each attempt, in ms. Default 1 000 (10 attempts: about 17 minutes). */
  backoffMs?: number
  /**
   * Completed jobs kept, so a late retry of a delivery finds its job and is not queued again:
   * by age (seconds) and count. Default 24 hours, at most 100 000.
   */
  keepCompleted?: { age?: number; count?: number }
  /** Longest an enqueue may take before the delivery is answered 503, in ms. Default 5 000. */
  timeoutMs?: number
  /**
   * Most jobs one write to Redis carries. Above 1, deliveries that arrive while a write is
   * under way are added together by the next one (`addBulk`), each answered 200 only once the
   * write that carried its job resolved. Default 1: each job added at once, concurrent adds
   * sharing the client's pipeline; grouping measured slower on BullMQ 6 (0.58x raw adds at 64
   * at once, against 0.84x; bench/RESULTS.md, 2026-11-29).
   */
  batchSize?: number
  /**
   * Told once connected when Redis keeps no append-only file: a restart would lose queued
   * deliveries already answered 200. Default the console; `false` skips the check.
   */
  logger?: Pick<Logger, 'warn'> | false
}

/** Where a BullMQ queue is: the connection it was given, its name and its key prefix. */
export interface BullMQQueueSettings {
  readonly connection: ConnectionInput
  readonly queueName: string
  readonly prefix: string | undefined
}

/** The queue `createBullMQQueue` returns: a `WebhookQueue`, with BullMQ's `Queue` and a `close()`. */
export interface BullMQWebhookQueue extends WebhookQueue {
  /** `bullmq` and the queue's name, for the enqueue span. */
  readonly messaging: { system: 'bullmq'; destination: string }
  /** Whether Redis takes jobs now: connected, and answering `PING`. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** The BullMQ queue, to inspect jobs (`getFailed()`, `getJobCounts()`). */
  readonly queue: Queue<WebhookJobData>
  /** Where the queue is: what `createBullMQWorker({ scheduling })` finds it by. */
  readonly settings: BullMQQueueSettings
  /** Resolves once connected to Redis. */
  ready(): Promise<void>
  close(): Promise<void>
}

function positive(who: string, name: string, value: number | undefined, fallback: number): number {
  return wholeNumber(who, name, value, fallback)
}

/** Warns, once connected, when this Redis keeps no append-only file (queued jobs lost on restart). */
function warnIfNotDurable(client: Redis, log: Pick<Logger, 'warn'>, who: string): void {
  client.once('ready', () => {
    checkPersistence(client).then(
      ({ appendonly, durable }) => {
        if (durable) return
        log.warn(
          appendonly === undefined
            ? `${who}: could not read appendonly (CONFIG GET refused). Make sure it is yes, with appendfsync everysec or always: a Redis restart without it loses queued deliveries already answered 200.`
            : `${who}: this Redis keeps no append-only file (appendonly no): a restart loses queued deliveries already answered 200, which the service will not send again. Set appendonly yes and appendfsync everysec (or always).`,
        )
      },
      () => {},
    )
  })
}

/** A job as the queue adds it. */
type Add = { name: string; data: WebhookJobData; opts: JobsOptions }

/**
 * How jobs go in. With `batchSize` above 1, concurrent deliveries' jobs in one write
 * (`addBulk`), each answered once its group is stored. At 1 (the default) each job is added at
 * once, as many under way as deliveries arrive: the client pipelines them on its one
 * connection, and Redis works while Node prepares the next (bench/RESULTS.md: 0.84x raw adds
 * at 64 at once, where `addBulk` groups reach 0.58x, as BullMQ's own `addBulk` does).
 */
function jobAdder(queue: Queue<WebhookJobData>, batchSize: number): (job: Add) => Promise<unknown> {
  if (batchSize === 1) return (job) => queue.add(job.name, job.data, job.opts)
  const grouped = new GroupCommit<Add>(
    (jobs) =>
      jobs.length === 1
        ? queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts)
        : queue.addBulk(jobs),
    batchSize,
    // Several groups under way at once: the client pipelines them on its one connection.
    4,
  )
  return (job) => grouped.add(job)
}

const notConnected = (client: Redis) =>
  new Error(`Redis is not connected (${client.status}): the delivery was not queued`)

/**
 * Resolves when the client is connected; waits for a first connection under way, and rejects
 * at once when Redis cannot be reached (refused, reconnecting, closed).
 */
function connected(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve()
  if (client.status !== 'connecting' && client.status !== 'connect' && client.status !== 'wait')
    return Promise.reject(notConnected(client))
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      client.off('ready', onReady)
      client.off('error', onError)
      if (error === undefined) resolve()
      else reject(error)
    }
    const onReady = () => done()
    const onError = () => done(notConnected(client))
    client.on('ready', onReady)
    client.on('error', onError)
  })
}

/**
 * A durable `WebhookQueue` on BullMQ: a delivery is answered 200 only once its job is stored
 * in Redis, and 503 at once when Redis cannot take it (the service then delivers it again).
 * Every retry of one delivery maps to one job (the job id is the hashed dedupe key). Run the
 * handlers in `createBullMQWorker`.
 *
 * Its Redis client has the offline queue off: with BullMQ's default, an enqueue while Redis is
 * down waits until Redis is back, and the delivery times out instead of being refused.
 *
 * @example
 * ```ts
 * const queue = createBullMQQueue({ connection: { host: '127.0.0.1', port: 6379 } })
 * app.use(schedulingWebhooks({ secret, queue }))
 * ```
 */
export function createBullMQQueue(options: BullMQQueueOptions): BullMQWebhookQueue {
  const who = 'createBullMQQueue'
  const name = checkQueueName(who, options?.queueName)
  const timeoutMs = positive(who, 'timeoutMs', options.timeoutMs, 5_000)
  const client = ownClient(who, options.connection, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  })
  // An error event with no listener would crash the process; a failed enqueue is answered 503.
  client.on('error', () => {})
  if (options.logger !== false) warnIfNotDurable(client, options.logger ?? consoleLogger, who)
  const defaultJobOptions: JobsOptions = {
    attempts: positive(who, 'attempts', options.attempts, 10),
    backoff: { type: 'exponential', delay: positive(who, 'backoffMs', options.backoffMs, 1_000) },
    removeOnComplete: { age: 24 * 60 * 60, count: 100_000, ...options.keepCompleted },
    removeOnFail: false,
  }
  const queue = new Queue<WebhookJobData>(name, {
    connection: client,
    prefix: options.prefix,
    defaultJobOptions,
  })
  queue.on('error', () => {})
  const add = jobAdder(queue, positive(who, 'batchSize', options.batchSize, 1))

  async function enqueue(
    event: AnyWebhookEvent,
    context: WebhookContext,
    delivery?: QueueDelivery,
  ) {
    const data = queuedDelivery(event, context, delivery)
    // Not connected (Redis down, even at boot): refused at once, so the delivery is answered
    // 503 now and the service retries it, rather than after `timeoutMs`.
    await connected(client)
    const jobId = jobIdFor(jobKeyOf(delivery, event.id))
    await withinMs(
      add({ name: event.type, data, opts: { jobId } }),
      timeoutMs,
      `Redis did not store the job within ${timeoutMs} ms`,
    )
  }

  return {
    queue,
    settings: { connection: options.connection, queueName: name, prefix: options.prefix },
    enqueue,
    messaging: { system: 'bullmq', destination: name },
    health: (healthOptions) => redisHealth(client, healthOptions),
    ready: () => queue.waitUntilReady().then(() => {}),
    async close() {
      await queue.close()
      client.disconnect()
    },
  }
}
