import { ConfigError } from '@scheduling-kit/core'
import { wholeNumber } from '@scheduling-kit/core/queue'
import type { JobInsert, PgBoss } from 'pg-boss'
import type { QueuePool } from './boss.js'

/** How each job is retried, watched and kept: set on the queue, carried by every job. */
export interface JobSettings {
  /** Attempts per job before it is kept as failed (a dead letter in the ledger). Default 10. */
  attempts?: number
  /**
   * First retry delay, doubled at each attempt (with pg-boss's jitter), in ms, rounded to whole
   * seconds (at least 1). Default 1 000 (10 attempts: about 17 minutes).
   */
  backoffMs?: number
  /**
   * A running job's worker writes a heartbeat every half of this; a job whose heartbeat is this
   * old (its worker died or hangs) is retried. In seconds, at least 10. Default 10.
   */
  heartbeatSeconds?: number
  /** Longest one attempt may run before it is failed and retried, in seconds. Default 900. */
  expireInSeconds?: number
  /**
   * How long a completed job is kept, in seconds, so a late retry of its delivery finds it and
   * is not queued again. Default 86 400 (24 hours).
   */
  keepCompletedSeconds?: number
}

/** The settings as pg-boss's job fields. */
export type PerJob = Required<
  Pick<
    JobInsert,
    | 'retryLimit'
    | 'retryDelay'
    | 'retryBackoff'
    | 'heartbeatSeconds'
    | 'expireInSeconds'
    | 'deleteAfterSeconds'
  >
>

export function jobSettings(who: string, settings: JobSettings): PerJob {
  const attempts = wholeNumber(who, 'attempts', settings.attempts, 10)
  const backoffMs = wholeNumber(who, 'backoffMs', settings.backoffMs, 1_000)
  const heartbeatSeconds = wholeNumber(who, 'heartbeatSeconds', settings.heartbeatSeconds, 10)
  if (heartbeatSeconds < 10) {
    throw new ConfigError(`${who}: heartbeatSeconds must be at least 10 (pg-boss's floor).`)
  }
  return {
    retryLimit: attempts - 1,
    retryDelay: Math.max(1, Math.round(backoffMs / 1000)),
    retryBackoff: true,
    heartbeatSeconds,
    expireInSeconds: wholeNumber(who, 'expireInSeconds', settings.expireInSeconds, 900),
    deleteAfterSeconds: wholeNumber(
      who,
      'keepCompletedSeconds',
      settings.keepCompletedSeconds,
      86_400,
    ),
  }
}

/**
 * Makes the queue when missing, with its jobs' settings and its order (`key_strict_fifo` when
 * kept per Event); an existing queue whose order differs is refused, saying so. A queue kept
 * per Event by an earlier version (its jobs keyed by the Event alone) has its unfinished jobs
 * of connected accounts keyed again under their account, in one statement.
 */
export async function ensureQueue(
  boss: PgBoss,
  name: string,
  perJob: PerJob | undefined,
  orderByEvent: boolean,
  tables?: { pool: QueuePool; schema: string },
): Promise<void> {
  const policy = orderByEvent ? 'key_strict_fifo' : 'standard'
  await boss.createQueue(name, { ...perJob, policy })
  const made = await boss.getQueue(name)
  if (made !== null && made.policy !== policy) {
    throw new Error(
      `the queue ${name} exists ${made.policy === 'key_strict_fifo' ? 'with' : 'without'} order per Event; orderByEvent ${orderByEvent} needs a queue of its own (another queueName)`,
    )
  }
  if (orderByEvent && tables !== undefined) await rekeyByAccount(tables.pool, tables.schema, name)
}

/**
 * Unfinished jobs keyed `event:<id>` that belong to a connected account, keyed as `orderKeyOf`
 * keys them now (`account-event:<length>:<account>:<id>`). Jobs of one account and Event keep
 * their order; those of two accounts no longer wait on each other.
 */
async function rekeyByAccount(pool: QueuePool, schema: string, name: string): Promise<void> {
  await pool.query(
    `UPDATE ${schema}.job SET singleton_key = 'account-event:' || length(data->>'account') || ':' || (data->>'account') || ':' || substr(singleton_key, 7)
     WHERE name = $1 AND singleton_key LIKE 'event:%' AND data->>'account' IS NOT NULL
       AND state IN ('created', 'retry', 'active', 'failed')`,
    [name],
  )
}
