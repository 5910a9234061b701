import PgBoss from 'pg-boss'
import { type Engine, type EngineOptions, runJob } from './engine.js'
import { type EngineJob, jobKey, jobOf, uuidOf } from './job.js'

/** pg-boss 10: a job per delivery (its id from the key), retries with backoff, workers polling. */
export async function pgBossEngine(options: EngineOptions): Promise<Engine> {
  const boss = new PgBoss({
    connectionString: options.connectionString,
    schema: options.schema,
    ...(options.recoverMs === undefined ? {} : { maintenanceIntervalSeconds: 1 }),
  })
  boss.on('error', (error) => {
    if (process.env.ENGINE_DEBUG) console.error('pg-boss error:', error.message)
  })
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
  return {
    async pending() {
      const { rows } = await boss
        .getDb()
        .executeSql(
          `SELECT count(*)::int AS n FROM ${options.schema}.job WHERE name = $1 AND state IN ('created', 'retry', 'active')`,
          [options.queueName],
        )
      return (rows as { n: number }[])[0]!.n
    },
    queue: {
      async enqueue(event, context, delivery) {
        if (!started) throw new Error('pg-boss did not start: the database is unreachable')
        const job = jobOf(event, context, delivery)
        await boss.send(options.queueName, job, {
          id: uuidOf(jobKey(job)),
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
      return { close: async () => void (await Promise.all(ids.map((id) => boss.offWork({ id })))) }
    },
  }
}
