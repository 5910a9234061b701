// What both queue benches share: the 2 KiB delivery, the driver that runs calls N at a time,
// and the comparison of one engine's raw single add against acknowledged deliveries through the
// webhook handler, grouped and not, in rounds whose order turns.
import { randomBytes } from 'node:crypto'
import { createWebhookHandler, type WebhookQueue } from '@scheduling-kit/core'
import { SECRET, signedRequest } from './signed.js'

export const PER_RUN = Number(process.env.BENCH_QUEUE_DELIVERIES ?? 3_000)

export interface Timing {
  perSecond: number
  p50: number
  p99: number
}

export function body(n: number, run: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: `payload_q${run}_${n}`,
      type: 'event.created',
      occurred_at: new Date().toISOString(),
      payload: { id: `event_q${run}_${n}`, note: 'x'.repeat(1900) },
    }),
  )
}

/** Runs `count` calls of `one`, `concurrency` at a time: per second, and each call's ms. */
export async function drive(
  count: number,
  concurrency: number,
  one: (n: number) => Promise<void>,
): Promise<Timing> {
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

/** One engine under comparison, at one concurrency. */
export interface QueueUnderBench {
  /** A fresh queue writing `batchSize` jobs a statement or script at most. */
  queue(batchSize: number): Promise<WebhookQueue>
  /** The engine's own single add of `data`, with a job id of its own. */
  rawAdd(id: string, data: object): Promise<void>
  /** The engine's own add of many jobs in one call (BullMQ `addBulk`, pg-boss `insert`). */
  rawBulk(jobs: { id: string; data: object }[]): Promise<void>
  cleanup(): Promise<void>
}

export interface QueueRow {
  what: string
  concurrency: number
  timing: Timing
}

/**
 * Raw single adds, and deliveries through `handle()` with the queue at `grouped` and at 1 job a
 * write, at each concurrency: the median of 3 rounds each, after a warm-up.
 */
export async function compareQueue(
  make: (run: string) => Promise<QueueUnderBench>,
  names: { raw: string; bulk: string; grouped: string; single: string },
  grouped: number,
): Promise<{ rows: QueueRow[]; ratio: Map<number, QueueRatio> }> {
  const rows: QueueRow[] = []
  const ratio = new Map<number, QueueRatio>()
  for (const concurrency of [1, 16, 64]) {
    const run = randomBytes(3).toString('hex')
    const engine = await make(run)
    const handlerOf = async (batchSize: number) =>
      createWebhookHandler({
        secret: SECRET,
        queue: await engine.queue(batchSize),
        dedupe: false,
        onAny: () => {},
      })
    const handlers = { grouped: await handlerOf(grouped), single: await handlerOf(1) }
    const requests = Array.from({ length: PER_RUN * 6 + 400 }, (_, n) =>
      signedRequest(body(n, run)),
    )
    let offset = 0
    const through = (path: 'grouped' | 'single', count: number) => {
      const handler = handlers[path]
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
    const rawId = (tag: string, n: number) =>
      `${tag.padEnd(8, '0').slice(0, 8)}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`
    await drive(200, concurrency, (n) => engine.rawAdd(rawId(`f${run}`, n), data(n)))
    await drive(200, concurrency, through('grouped', 200))
    await drive(200, concurrency, through('single', 200))
    // The engine's own bulk add, `concurrency` jobs a call, one call at a time: what a
    // grouped write could reach with no webhook in front (each job counted as a delivery).
    const bulk = (round: number) => async (n: number) => {
      const jobs = Array.from({ length: concurrency }, (_, i) => ({
        id: rawId(`b${round}${run}`, n * concurrency + i),
        data: data(i),
      }))
      await engine.rawBulk(jobs)
    }
    await drive(Math.ceil(200 / concurrency), 1, bulk(9))
    const paths = {
      raw: (round: number) => (n: number) => engine.rawAdd(rawId(`${round}${run}`, n), data(n)),
      bulk,
      grouped: () => through('grouped', PER_RUN),
      single: () => through('single', PER_RUN),
    }
    const results: Record<keyof typeof paths, Timing[]> = {
      raw: [],
      bulk: [],
      grouped: [],
      single: [],
    }
    const order: (keyof typeof paths)[] = ['raw', 'bulk', 'grouped', 'single']
    for (let round = 0; round < 3; round++) {
      for (const path of [...order.slice(round), ...order.slice(0, round)]) {
        const timing =
          path === 'bulk'
            ? perJob(await drive(Math.ceil(PER_RUN / concurrency), 1, bulk(round)), concurrency)
            : await drive(PER_RUN, concurrency, paths[path](round))
        results[path].push(timing)
      }
    }
    const mid = (list: Timing[]) => [...list].sort((a, b) => a.perSecond - b.perSecond)[1]!
    const raw = mid(results.raw)
    const bulkRun = mid(results.bulk)
    const groupedRun = mid(results.grouped)
    const singleRun = mid(results.single)
    rows.push({ what: names.raw, concurrency, timing: raw })
    rows.push({ what: `${names.bulk}, ${concurrency} jobs a call`, concurrency, timing: bulkRun })
    rows.push({ what: names.grouped, concurrency, timing: groupedRun })
    rows.push({ what: names.single, concurrency, timing: singleRun })
    ratio.set(concurrency, {
      grouped: groupedRun.perSecond / raw.perSecond,
      single: singleRun.perSecond / raw.perSecond,
      groupedOverBulk: groupedRun.perSecond / bulkRun.perSecond,
    })
    await engine.cleanup()
  }
  return { rows, ratio }
}

/** Acknowledged deliveries per second over the engine's raw single adds, and over its bulk add. */
export interface QueueRatio {
  grouped: number
  single: number
  groupedOverBulk: number
}

/** A bulk call's timing told per job: its rate times the jobs it carries (latency per call). */
function perJob(timing: Timing, jobs: number): Timing {
  return { ...timing, perSecond: timing.perSecond * jobs }
}

export function printRows(title: string, rows: QueueRow[]): void {
  console.log(`\n| ${title}, ${PER_RUN} deliveries each | at once | per second | p50 ms | p99 ms |`)
  console.log('|---|---:|---:|---:|---:|')
  for (const { what, concurrency, timing } of rows)
    console.log(
      `| ${what} | ${concurrency} | ${timing.perSecond.toFixed(0)} | ${timing.p50.toFixed(2)} | ${timing.p99.toFixed(2)} |`,
    )
}
