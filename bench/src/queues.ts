// Acknowledged deliveries per second through a durable queue, one process: the webhook
// handler's `handle()` with the queue (verify, then enqueue; answered 200 once the job is
// stored), at 1, 16 and 64 deliveries at once, against the engine's own raw single add at the
// same concurrency in the same run; with grouped writes and one job a write. Time per delivery,
// from the request handed over to the 200, as p50 and p99. BullMQ on Redis runs here;
// @scheduling-kit/postgres-queue (pg-boss 12) in a child process.
import { spawnSync } from 'node:child_process'
import { createBullMQQueue } from '@scheduling-kit/bullmq'
import type { Target } from './harness.js'
import { compareQueue, printRows, type QueueRatio, type QueueRow } from './queue-drive.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

async function bullmqRows() {
  return compareQueue(
    async (run) => {
      const made: ReturnType<typeof createBullMQQueue>[] = []
      const queue = async (batchSize: number) => {
        const q = createBullMQQueue({
          connection: { url: REDIS_URL },
          queueName: `bench-q${batchSize}-${run}`,
          logger: false,
          batchSize,
        })
        await q.ready()
        made.push(q)
        return q
      }
      const first = await queue(1)
      return {
        queue: async (batchSize) => (batchSize === 1 ? first : queue(batchSize)),
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
      raw: 'raw `queue.add`',
      bulk: 'raw `queue.addBulk`',
      grouped: 'handle() + queue, batchSize 64 (addBulk)',
      single: 'handle() + queue, batchSize 1 (the default)',
    },
    64,
  )
}

/** The PostgreSQL queue's rows, from its child process. */
async function postgresRows(): Promise<{
  rows: QueueRow[]
  ratio: Map<number, QueueRatio>
}> {
  const child = spawnSync(
    process.execPath,
    ['--import', 'tsx', new URL('./postgres-queue-child.ts', import.meta.url).pathname],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 24,
    },
  )
  const line = child.stdout.trim().split('\n').pop() ?? ''
  if (child.status !== 0) throw new Error(`the PostgreSQL queue bench failed (${child.status})`)
  const parsed = JSON.parse(line) as {
    rows: QueueRow[]
    ratio: [number, QueueRatio][]
  }
  return { rows: parsed.rows, ratio: new Map(parsed.ratio) }
}

export async function queuesBench(): Promise<Target[]> {
  const bull = await bullmqRows()
  printRows('BullMQ on Redis', bull.rows)
  const pg = await postgresRows()
  printRows('@scheduling-kit/postgres-queue (pg-boss 12) on PostgreSQL', pg.rows)
  return [
    {
      what: 'BullMQ: raw single adds / acknowledged deliveries, one at a time (batchSize 1, the default)',
      ratio: 1 / bull.ratio.get(1)!.single,
      limit: 1.1,
      kind: 'max',
    },
    {
      what: 'BullMQ: acknowledged deliveries / raw single adds, 64 at once (batchSize 1, the default)',
      ratio: bull.ratio.get(64)!.single,
      limit: 1,
      kind: 'min',
    },
    {
      what: 'PostgreSQL queue: raw single sends / acknowledged deliveries, one at a time (batchSize 64)',
      ratio: 1 / pg.ratio.get(1)!.grouped,
      limit: 1.1,
      kind: 'max',
    },
    {
      what: "PostgreSQL queue: acknowledged deliveries / pg-boss's own 64-job insert, 64 at once",
      ratio: pg.ratio.get(64)!.groupedOverBulk,
      limit: 0.9,
      kind: 'min',
    },
  ]
}
