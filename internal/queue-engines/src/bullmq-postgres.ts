import { createPostgresBackend, withBackend } from 'bullmq'
import { type Engine, type EngineOptions, runJob } from './engine.js'
import { type EngineJob, hexIdOf, jobKey, jobOf } from './job.js'

const { Queue, Worker } = withBackend(createPostgresBackend)

/** BullMQ 6's PostgreSQL backend: the same Queue and Worker as on Redis. */
export async function bullmqPostgresEngine(options: EngineOptions): Promise<Engine> {
  const connection = {
    connectionString: options.connectionString,
    schema: options.schema,
    migrate: true,
    connectionTimeoutMillis: 2_000,
  }
  const queue = new Queue<EngineJob>(options.queueName, { connection })
  queue.on('error', () => {})
  const workers: InstanceType<typeof Worker<EngineJob>>[] = []
  return {
    async pending() {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')
      return Object.values(counts).reduce((a, b) => a + b, 0)
    },
    queue: {
      async enqueue(event, context, delivery) {
        const job = jobOf(event, context, delivery)
        await queue.add(event.type, job, {
          jobId: hexIdOf(jobKey(job)),
          attempts: options.attempts,
          backoff: { type: 'exponential', delay: options.backoffMs },
          removeOnFail: false,
        })
      },
      close: async () => {
        for (const w of workers) await w.close().catch(() => {})
        await queue.close().catch(() => {})
      },
    },
    async worker(worker) {
      const w = new Worker<EngineJob>(
        options.queueName,
        async (job) => {
          const final = job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
          if ((await runJob(worker, job.data, final)) === 'busy')
            throw new Error('its Event runs now: tried again later')
        },
        {
          connection,
          concurrency: worker.concurrency ?? 1,
          ...(options.recoverMs === undefined
            ? {}
            : {
                lockDuration: options.recoverMs,
                stalledInterval: options.recoverMs,
                maxStalledCount: 1_000,
              }),
        },
      )
      w.on('error', () => {})
      workers.push(w)
      await w.waitUntilReady()
      return { close: () => w.close() }
    },
  }
}
