import type { WebhookHandler, WebhookQueue } from '@scheduling-kit/core'
import { type DeliveryRecord, runQueued } from '@scheduling-kit/core/queue'
import { type EngineJob, jobKey } from './job.js'

// What the engines compared have in common: their options, the queue and workers each gives,
// and how a worker runs one job (through the ledger when it has one).

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
  ledger?: DeliveryRecord
  concurrency?: number
}

/** A queue and its workers on one engine. */
export interface Engine {
  queue: WebhookQueue & { close(): Promise<void> }
  worker(options: EngineWorkerOptions): Promise<{ close(): Promise<void> }>
  /** Jobs not finished yet (waiting, running, or to be retried), as the engine counts them. */
  pending(): Promise<number>
}

/** Runs one job's handlers as the queue packages do (`runQueued`): through the ledger when given. */
export async function runJob(
  options: EngineWorkerOptions,
  job: EngineJob,
  finalAttempt: boolean,
): Promise<'done' | 'busy'> {
  const outcome = await runQueued(
    { handler: options.handler, ledger: options.ledger, claimMs: 30_000 },
    job,
    jobKey(job),
    finalAttempt,
  )
  return outcome === 'busy' ? 'busy' : 'done'
}
