import type { DeliveryLedger, WebhookHandler, WebhookQueue } from '@scheduling-kit/core'
import PgBoss from 'pg-boss'
import { type EngineJob, jobOf, uuidOf } from './job.js'

export interface EngineOptions {
  connectionString: string
  schema: string
  queueName: string
  attempts: number
  backoffMs: number
  /**
   * How long a job a dead worker held stays taken before it runs again, in ms: pg-boss 10's
   * expiry (checked by its maintenance), BullMQ's lock. Default each engine's own.
   */
  recoverMs?: number
}

export interface EngineWorkerOptions {
  handler: Pick<WebhookHandler, 'dispatch'>
  ledger?: Pick<DeliveryLedger, 'deliver'>
  concurrency?: number
}

/** A queue and its workers on one engine. */
export interface Engine {
  queue: WebhookQueue & { close(): Promise<void> }
  worker(options: EngineWorkerOptions): Promise<{ close(): Promise<void> }>
  /** Drops the engine's schema. */
  cleanup(): Promise<void>
}

/** Runs one job's handlers, through the ledger when given. */
export async function runJob(
  options: EngineWorkerOptions,
  job: EngineJob,
  finalAttempt: boolean,
): Promise<'done' | 'busy'> {
  const run = () =>
    options.handler.dispatch(job.event, {
      webhookId: job.webhookId,
      secretIndex: job.secretIndex,
      account: job.account,
    })
  if (options.ledger === undefined) {
    await run()
    return 'done'
  }
  const outcome = await options.ledger.deliver(
    {
      envelope: job.event,
      key: job.key,
      webhookId: job.webhookId,
      account: job.account,
      text: JSON.stringify(job.event),
    },
    run,
    { finalAttempt },
  )
  return outcome === 'busy' ? 'busy' : 'done'
}

/** pg-boss 10: a job per delivery (its id from the key), retries with backoff, workers polling. */
export async function pgBossEngine(options: EngineOptions): Promise<Engine> {
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: options.schema,
    ...(options.recoverMs === undefined ? {} : { maintenanceIntervalSeconds: 1 }),
  })
  boss.on('error', () => {})
  let started = false
  try {
    await boss.start()
    await boss.createQueue(options.queueName)
    started = true
  } catch {
    // Unreachable: every enqueue is refused below.
  }
  const retryLimit = options.attempts - 1
  const retryDelay = Math.max(1, Math.round(options.backoffMs / 1000))
  const workers: string[] = []
  return {
    queue: {
      async enqueue(event, context, delivery) {
        if (!started) throw new Error('pg-boss did not start: the database is unreachable')
        await boss.send(options.queueName, jobOf(event, context, delivery), {
          id: uuidOf(delivery.key),
          retryLimit,
          retryDelay,
          retryBackoff: true,
          ...(options.recoverMs === undefined
            ? {}
            : { expireInSeconds: Math.max(1, Math.round(options.recoverMs / 1000)) }),
        })
      },
      close: () => (started ? boss.stop({ graceful: false, wait: true }) : Promise.resolve()),
    },
    async worker(worker) {
      const ids: string[] = []
      for (let i = 0; i < (worker.concurrency ?? 1); i++) {
        let id: string | undefined
        id = await boss.work<EngineJob>(
          options.queueName,
          { batchSize: 1, pollingIntervalSeconds: 0.5, includeMetadata: true },
          async ([job]) => {
            try {
              if (job === undefined) return
              const final = job.retryCount >= job.retryLimit
              if ((await runJob(worker, job.data, final)) === 'busy')
                throw new Error('its Event runs now: tried again later')
            } finally {
              // A job was found: fetch again at once. pg-boss 10's worker otherwise waits its
              // polling interval after every fetch, so one job a fetch ran 2 a second.
              if (id !== undefined) boss.notifyWorker(id)
            }
          },
        )
        ids.push(id)
      }
      workers.push(...ids)
      return { close: async () => void (await Promise.all(ids.map((id) => boss.offWork({ id })))) }
    },
    cleanup: async () => {},
  }
}
