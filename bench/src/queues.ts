// Acknowledged deliveries per second through a durable queue, one process: the webhook
// handler's `handle()` with the queue (verify, then enqueue; answered 200 once the job is
// stored), at 1, 16 and 64 deliveries at once, against the engine's own raw single `add` at
// the same concurrency in the same run; with grouped writes (`batchSize: 64`) and without
// (`batchSize: 1`, the default). Time per delivery, from the request handed over to the 200, as p50 and p99.
import { randomBytes } from 'node:crypto'
import { createBullMQQueue } from '@scheduling-kit/bullmq'
import { createWebhookHandler } from '@scheduling-kit/core'
import type { Target } from './harness.js'
import { SECRET, signedRequest } from './signed.js'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const PER_RUN = Number(process.env.BENCH_QUEUE_DELIVERIES ?? 3_000)

function body(n: number, run: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: `payload_q${run}_${n}`,
      type: 'event.created',
      occurred_at: '2024-05-01T14:03:22Z',
      payload: { id: `event_q${run}_${n}`, note: 'x'.repeat(1900) },
    }),
  )
}

/** Runs `count` calls of `one`, `concurrency` at a time: per second, and each call's ms. */
async function drive(
  count: number,
  concurrency: number,
  one: (n: number) => Promise<void>,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const times: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const n = next++
        const t = performance.now()
        await one(n)
        times.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  times.sort((a, b) => a - b)
  return {
    perSecond: count / seconds,
    p50: times[Math.floor(times.length * 0.5)]!,
    p99: times[Math.floor(times.length * 0.99)]!,
  }
}

/** BullMQ on Redis: raw adds, and deliveries through the handler with and without grouping. */
export async function queuesBench(): Promise<Target[]> {
  const rows: [string, number, { perSecond: number; p50: number; p99: number }][] = []
  const ratios = new Map<string, number>()
  for (const concurrency of [1, 16, 64]) {
    const run = randomBytes(3).toString('hex')
    const grouped = createBullMQQueue({
      connection: { url: REDIS_URL },
      queueName: `bench-q-${run}`,
      logger: false,
      batchSize: 64,
    })
    const single = createBullMQQueue({
      connection: { url: REDIS_URL },
      queueName: `bench-q1-${run}`,
      logger: false,
      batchSize: 1,
    })
    await Promise.all([grouped.ready(), single.ready()])
    const handlerOf = (queue: typeof grouped) =>
      createWebhookHandler({ secret: SECRET, queue, dedupe: false, onAny: () => {} })
    const requests = Array.from({ length: PER_RUN * 6 + 400 }, (_, n) =>
      signedRequest(body(n, run)),
    )
    let offset = 0
    const handlers = new Map([
      [grouped, handlerOf(grouped)],
      [single, handlerOf(single)],
    ])
    const through = (queue: typeof grouped, count = PER_RUN) => {
      const handler = handlers.get(queue)!
      const base = offset
      offset += count
      return async (n: number) => {
        const answer = await handler.handle(requests[base + n]!)
        if (answer?.status !== 200) throw new Error(`answered ${answer?.status}`)
      }
    }
    // The raw adds carry what a delivery's job carries: its 2 KiB event and context.
    const data = (n: number) => ({
      event: JSON.parse(body(n, `raw${run}`).toString()),
      webhookId: 'wh_bench',
      secretIndex: 0,
    })
    // Warm each path, then 3 rounds, the order turned each round; the median of each.
    await drive(200, concurrency, (n) =>
      grouped.queue.add('warm', data(n), { jobId: `w${n}` }).then(),
    )
    const paths = {
      raw: (round: number) => (n: number) =>
        single.queue
          .add('event.created', data(n), { jobId: `raw-${run}-${round}-${n}` })
          .then(() => {}),
      grouped: () => through(grouped, 200),
      single: () => through(single, 200),
    }
    await drive(200, concurrency, paths.grouped())
    await drive(200, concurrency, paths.single())
    const results: Record<keyof typeof paths, Awaited<ReturnType<typeof drive>>[]> = {
      raw: [],
      grouped: [],
      single: [],
    }
    const order: (keyof typeof paths)[] = ['raw', 'grouped', 'single']
    for (let round = 0; round < 3; round++) {
      for (const path of [...order.slice(round), ...order.slice(0, round)])
        results[path].push(await drive(PER_RUN, concurrency, paths[path](round)))
    }
    const mid = (list: Awaited<ReturnType<typeof drive>>[]) =>
      [...list].sort((a, b) => a.perSecond - b.perSecond)[1]!
    const raw = mid(results.raw)
    const groupedRun = mid(results.grouped)
    const singleRun = mid(results.single)
    rows.push(['raw `queue.add`', concurrency, raw])
    rows.push(['handle() + queue, batchSize 64 (grouped)', concurrency, groupedRun])
    rows.push(['handle() + queue, batchSize 1 (the default)', concurrency, singleRun])
    ratios.set(`raw/grouped@${concurrency}`, raw.perSecond / groupedRun.perSecond)
    await Promise.all([
      grouped.queue.obliterate({ force: true }),
      single.queue.obliterate({ force: true }),
    ])
    await Promise.all([grouped.close(), single.close()])
  }
  console.log(
    `\n| BullMQ on Redis, ${PER_RUN} deliveries each | at once | per second | p50 ms | p99 ms |`,
  )
  console.log('|---|---:|---:|---:|---:|')
  for (const [what, c, r] of rows)
    console.log(
      `| ${what} | ${c} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} |`,
    )
  return [
    {
      what: 'BullMQ: raw single adds / acknowledged deliveries, one at a time',
      ratio: ratios.get('raw/grouped@1')!,
      limit: 1.1,
      kind: 'max',
    },
    {
      what: 'BullMQ: acknowledged deliveries / raw single adds, 64 at once (grouped writes)',
      ratio: 1 / ratios.get('raw/grouped@64')!,
      limit: 1,
      kind: 'min',
    },
  ]
}
