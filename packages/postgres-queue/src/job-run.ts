import type { DedupeStore, Logger, WebhookHandler } from '@scheduling-kit/core'
import { type DeliveryRecord, inJobSpan, runQueued, serverText } from '@scheduling-kit/core/queue'
import type { JobWithMetadata, PgBoss } from 'pg-boss'
import { jobIdFor, type PostgresJobData } from './job.js'

/** Thrown for a job another attempt holds: pg-boss retries it later. */
class HeldElsewhere extends Error {
  constructor() {
    super('another attempt of this delivery (or a change of its Event) runs now: retried later')
  }
}

export interface JobRunSettings {
  who: string
  /** The queue's name, for the job's span. */
  name: string
  handler: Pick<WebhookHandler, 'dispatch'>
  /** Where the job's outcome is recorded (its record of what ran), when given. */
  ledger: DeliveryRecord | undefined
  /** Else where jobs are marked handled; none: at-least-once. */
  dedupe: DedupeStore | undefined
  claimMs: number
  log: Pick<Logger, 'warn'>
  /** Where the original job of a replayed delivery is let go. */
  boss: Pick<PgBoss, 'getJobById' | 'deleteJob'>
}

/**
 * How a worker runs one job: in its consumer span (`process <queue>`, continuing the
 * delivery's trace), through the ledger or under a dedupe claim, a failure told with its
 * attempt. A job another attempt holds is thrown back for pg-boss to retry later.
 */
export class JobRun {
  readonly #s: JobRunSettings

  constructor(settings: JobRunSettings) {
    this.#s = settings
  }

  async work([job]: JobWithMetadata<PostgresJobData>[]): Promise<void> {
    if (job === undefined) return
    try {
      await inJobSpan(
        {
          system: 'pg-boss',
          destination: this.#s.name,
          messageId: job.id,
          attemptsMade: job.retryCount,
          event: job.data.event,
          trace: job.data.trace,
        },
        () => this.#run(job),
      )
    } catch (error) {
      if (!(error instanceof HeldElsewhere)) {
        const { type, id } = job.data.event
        this.#s.log.warn(
          `${this.#s.who}: ${serverText(String(type), 100)} (${serverText(String(id), 100)}) failed on attempt ${job.retryCount + 1} of ${job.retryLimit + 1}: ${(error as Error)?.message}`,
        )
      }
      throw error
    }
  }

  async #run(job: JobWithMetadata<PostgresJobData>): Promise<void> {
    const outcome = await runQueued(this.#s, job.data, job.id, job.retryCount >= job.retryLimit)
    if (outcome === 'busy') throw new HeldElsewhere()
    const { replay, key } = job.data
    if (replay !== undefined && outcome === 'ran' && key !== undefined) await this.#letGo(key)
  }

  /**
   * A replay ran: the delivery's own job, failed for good, is deleted (the ledger keeps its
   * record). With `orderByEvent` it held its Event's later changes; it holds nothing now.
   */
  async #letGo(key: string): Promise<void> {
    const { boss, name } = this.#s
    const id = jobIdFor(key)
    const original = await boss.getJobById(name, id).catch(() => null)
    if (original?.state === 'failed') await boss.deleteJob(name, id).catch(() => {})
  }
}
