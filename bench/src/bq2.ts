import { createBullMQQueue } from '@scheduling-kit/bullmq'
import { compareQueue, printRows } from './queue-drive.js'

const { rows, ratio } = await compareQueue(
  async (run) => {
    const made: ReturnType<typeof createBullMQQueue>[] = []
    const queue = async (batchSize: number) => {
      const q = createBullMQQueue({
        connection: { url: 'redis://127.0.0.1:6379' },
        queueName: `bq2-${batchSize}-${run}`,
        logger: false,
        batchSize,
      })
      await q.ready()
      made.push(q)
      return q
    }
    const first = await queue(1)
    return {
      queue: async (b) => (b === 1 ? first : queue(b)),
      rawAdd: async (id, data) => {
        await first.queue.add('event.created', data as never, { jobId: id })
      },
      rawBulk: async (jobs) => {
        await first.queue.addBulk(
          jobs.map(({ id, data }) => ({
            name: 'event.created',
            data: data as never,
            opts: { jobId: id },
          })),
        )
      },
      cleanup: async () => {
        for (const q of made) {
          await q.queue.obliterate({ force: true })
          await q.close()
        }
      },
    }
  },
  {
    raw: 'raw add',
    bulk: 'raw addBulk',
    grouped: `grouped ${process.env.SK_BATCH}`,
    single: 'single',
  },
  Number(process.env.SK_BATCH ?? 64),
)
printRows(
  `inflight ${process.env.SK_INFLIGHT}`,
  rows.filter((r) => r.concurrency === 64),
)
console.log(JSON.stringify([...ratio].filter(([c]) => c === 64)))
