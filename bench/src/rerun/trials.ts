// The re-run bench's coordinator, run on Node 22 (pg-boss 12's floor) by rerun.ts: for each
// queue and trial, one delivery is taken by a worker process that hangs in its handler, a
// second worker is started and idle, the first is SIGKILLed, and the time until the second
// runs the delivery is measured. Prints one JSON line: each queue's times in ms.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createBullMQQueue } from '@scheduling-kit/bullmq'
import { createDeliveryLedger, createWebhookHandler, type WebhookQueue } from '@scheduling-kit/core'
import { migrate, PostgresLedgerStore } from '@scheduling-kit/postgres'
import { createPostgresQueue } from '@scheduling-kit/postgres-queue'
import { createTestEvent, signedRequest } from '@scheduling-kit/testing'
import pg from 'pg'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const TRIALS = Number(process.env.BENCH_RERUN_TRIALS ?? 3)
const WORKER = new URL('./worker.ts', import.meta.url).pathname

/** A worker process, with a wait for the next line it prints that starts with `prefix`. */
function worker(engine: string, where: string, mode: 'hang' | 'run') {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, engine, where, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, DATABASE_URL, REDIS_URL },
  })
  const lines: string[] = []
  const waiting: Array<() => void> = []
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    lines.push(...parts)
    for (const wake of waiting.splice(0)) wake()
  })
  const next = async (prefix: string): Promise<string> => {
    for (;;) {
      const at = lines.findIndex((l) => l.startsWith(prefix))
      if (at >= 0) return lines.splice(at, 1)[0]!
      if (child.exitCode !== null) throw new Error(`the ${mode} worker ended (${child.exitCode})`)
      await new Promise<void>((resolve) => waiting.push(resolve))
    }
  }
  return { child, next }
}

async function trial(engine: string, queue: WebhookQueue, where: string): Promise<number> {
  const ledger = engine.endsWith('+ ledger')
    ? createDeliveryLedger({ store: new PostgresLedgerStore({ pool, schema: where }) })
    : undefined
  const handler = createWebhookHandler({
    secret: 'rerun-bench-secret',
    queue,
    ...(ledger === undefined ? {} : { ledger }),
  })
  const first = worker(engine, where, 'hang')
  let second: ReturnType<typeof worker> | undefined
  try {
    await first.next('ready')
    const event = createTestEvent('event.created')
    const { body, headers } = await signedRequest(event, { secret: 'rerun-bench-secret' })
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers,
      body,
    })
    if (answer?.status !== 200) throw new Error(`enqueue answered ${answer?.status}`)
    await first.next(`started ${event.id}`)
    second = worker(engine, where, 'run')
    await second.next('ready')
    const killedAt = performance.now()
    first.child.kill('SIGKILL')
    await second.next(`ran ${event.id}`)
    return performance.now() - killedAt
  } finally {
    first.child.kill('SIGKILL')
    second?.child.kill('SIGKILL')
  }
}

const times: Record<string, number[]> = {
  'postgres-queue': [],
  'postgres-queue + ledger': [],
  bullmq: [],
}
const run = randomBytes(3).toString('hex')
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 })
const quiet = { warn() {}, error() {} }
for (let n = 0; n < TRIALS; n++) {
  const schema = `sk_bench_rerun_${run}_${n}`
  const pgQueue = createPostgresQueue({ pool, schema, logger: quiet })
  await pgQueue.ready()
  times['postgres-queue']!.push(await trial('postgres-queue', pgQueue, schema))
  await migrate(pool, { schema })
  times['postgres-queue + ledger']!.push(await trial('postgres-queue + ledger', pgQueue, schema))
  await pgQueue.close()
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)

  const queueName = `sk-bench-rerun-${run}-${n}`
  const bull = createBullMQQueue({
    connection: { url: REDIS_URL },
    queueName,
    logger: quiet,
  } as never)
  await bull.ready()
  times.bullmq!.push(await trial('bullmq', bull, queueName))
  await (bull as unknown as { queue: { obliterate(o: object): Promise<void> } }).queue
    .obliterate({ force: true })
    .catch(() => {})
  await bull.close()
}
await pool.end()
console.log(JSON.stringify(times))
