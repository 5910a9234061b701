import { createWebhookHandler } from '@scheduling-kit/core'
import { RedisDedupeStore } from '@scheduling-kit/redis'
import { createTestEvent } from '@scheduling-kit/testing'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { expect, it, vi } from 'vitest'
import { createBullMQQueue, createBullMQWorker, jobIdFor } from '../src/index.js'
import { connection, later, ownRedis, redis, uniqueQueue } from './helpers.js'

const context = { webhookId: 'wh_1', secretIndex: 0, headers: {} }
/** How long a condition may take to come true: generous, as both cores may be busy. */
const patience = { timeout: 15_000, interval: 20 }

it('stores one job per delivery key, its id hashed (no ":"), with the event and context', async () => {
  const queueName = uniqueQueue('ids')
  const queue = createBullMQQueue({ connection, queueName })
  later(() => queue.close())
  const event = createTestEvent('event.created')
  await queue.enqueue(event, context, { key: `wh_1:${event.id}` })
  await queue.enqueue(event, context, { key: `wh_1:${event.id}` }) // the service's retry
  await queue.enqueue(event, context, { key: `wh_2:${event.id}` }) // another webhook
  const jobs = await queue.queue.getJobs(['wait'])
  expect(jobs).toHaveLength(2)
  const ids = jobs.map((j) => j.id).sort()
  expect(ids).toEqual([jobIdFor(`wh_1:${event.id}`), jobIdFor(`wh_2:${event.id}`)].sort())
  for (const id of ids) expect(id).toMatch(/^wh-[0-9a-f]{64}$/)
  expect(jobs[0]!.data.event).toEqual(event)
  expect(jobs[0]!.name).toBe('event.created')
})

it("works on a duplicate of the caller's client: its settings unchanged, still open after close", async () => {
  const mine = redis()
  const queue = createBullMQQueue({ connection: mine, queueName: uniqueQueue('dup') })
  await queue.ready()
  const event = createTestEvent('event.created')
  await queue.enqueue(event, context, { key: event.id })
  expect(await queue.queue.getJobCounts('wait')).toEqual({ wait: 1 })
  await queue.close()
  expect(mine.options.enableOfflineQueue).toBe(true)
  expect(await mine.ping()).toBe('PONG')
})

it('the worker retries a failing handler with backoff, then runs it once; used-up jobs are kept as failed', async () => {
  const queueName = uniqueQueue('retry')
  const queue = createBullMQQueue({ connection, queueName, attempts: 3, backoffMs: 20 })
  later(() => queue.close())
  const calls = new Map<string, number>()
  const handler = createWebhookHandler({
    secret: 'unused-by-the-worker',
    onAny: (event) => {
      const n = (calls.get(event.id) ?? 0) + 1
      calls.set(event.id, n)
      if (event.type === 'event.canceled') throw new Error('always fails')
      if (n < 3) throw new Error(`fails on attempt ${n}`)
    },
  })
  const warnings: string[] = []
  const worker = createBullMQWorker({
    handler,
    connection,
    queueName,
    logger: { warn: (m) => warnings.push(m), error: (m) => warnings.push(m) },
  })
  later(() => worker.close())
  const ok = createTestEvent('event.created')
  const bad = createTestEvent('event.canceled')
  await queue.enqueue(ok, context, { key: ok.id })
  await queue.enqueue(bad, context, { key: bad.id })
  await vi.waitFor(
    async () =>
      expect(await queue.queue.getJobCounts('completed', 'failed')).toEqual({
        completed: 1,
        failed: 1,
      }),
    patience,
  )
  expect(calls.get(ok.id)).toBe(3)
  expect(calls.get(bad.id)).toBe(3)
  const [failed] = await queue.queue.getFailed()
  expect(failed!.data.event.id).toBe(bad.id)
  expect(failed!.failedReason).toBe('always fails') // the handler's own error, not the HTTP wording
  expect(
    warnings.some((w) => w.includes(`event.canceled (${bad.id}) failed on attempt 3 of 3`)),
  ).toBe(true)
})

it('a job whose handler finished but whose completion BullMQ never recorded is not run again', async () => {
  const queueName = uniqueQueue('marked')
  const handled: string[] = []
  const handler = createWebhookHandler({ secret: 'x', onAny: (e) => void handled.push(e.id) })
  const first = createBullMQWorker({ handler, connection, queueName })
  later(() => first.close())
  const producer = new Queue(queueName, { connection: redis() })
  later(() => producer.close())
  const event = createTestEvent('event.created')
  const data = { event, webhookId: 'wh_1', secretIndex: 0 }
  await producer.add(event.type, data, { jobId: jobIdFor(event.id) })
  await vi.waitFor(() => expect(handled).toEqual([event.id]), patience)
  // Completed, so its lock is let go (on a busy machine that comes a while after the handler).
  await vi.waitFor(
    async () => expect(await producer.getJobCounts('completed')).toEqual({ completed: 1 }),
    patience,
  )
  // The same job again, as after a crash between the handler's end and BullMQ's completion.
  await (await producer.getJob(jobIdFor(event.id)))!.remove()
  await producer.add(event.type, data, { jobId: jobIdFor(event.id) })
  await vi.waitFor(
    async () => expect(await producer.getJobCounts('completed')).toEqual({ completed: 1 }),
    patience,
  )
  expect(handled).toEqual([event.id])
})

it('refuses bad options with the fix', () => {
  expect(() => createBullMQQueue({ connection, queueName: 'a:b' })).toThrow(/without ':'/)
  expect(() => createBullMQQueue({} as never)).toThrow(/pass \{ connection \}/)
  expect(() => createBullMQWorker({ connection } as never)).toThrow(/handler with dispatch\(\)/)
})

it('Redis unreachable at boot: an enqueue is refused at once, not after the time-out', async () => {
  // Nothing listens on port 9; a minute's time-out would outlast the test's own.
  const queue = createBullMQQueue({
    connection: { host: '127.0.0.1', port: 9 },
    queueName: uniqueQueue('boot'),
    timeoutMs: 60_000,
  })
  later(() => queue.close())
  const event = createTestEvent('event.created')
  await expect(queue.enqueue(event, context, { key: event.id })).rejects.toThrow(
    /Redis is not connected/,
  )
  await new Promise((r) => setTimeout(r, 200))
  await expect(queue.enqueue(event, context, { key: event.id })).rejects.toThrow(
    /Redis is not connected/,
  )
})

it("the worker's claim follows a handler that runs past claimMs; its keys live under the queue's prefix; a stalled job is not failed after one stall", async () => {
  const queueName = uniqueQueue('claim')
  const queue = createBullMQQueue({ connection, queueName })
  later(() => queue.close())
  const seen: string[] = []
  const store = new RedisDedupeStore({
    client: redis(),
    prefix: `bull:${queueName}:`,
    logger: false,
  })
  const handler = createWebhookHandler({
    secret: 'unused-by-the-worker',
    onAny: async (event) => {
      // Past the claim's time, the claim is still this handler's: renewed every third of it,
      // so a renewal may come up to two seconds late (a busy machine) and still hold.
      await new Promise((r) => setTimeout(r, 4_000))
      seen.push(await store.claim(jobIdFor(event.id), 'another-worker'))
    },
  })
  const worker = createBullMQWorker({ handler, connection, queueName, claimMs: 3_000 })
  later(() => worker.close())
  expect(worker.worker.opts.maxStalledCount).toBe(1_000)
  const event = createTestEvent('event.created')
  await queue.enqueue(event, context, { key: event.id })
  await vi.waitFor(() => expect(seen).toEqual(['in_progress']), patience)
  await vi.waitFor(
    async () => expect(await store.claim(jobIdFor(event.id), 'late')).toBe('completed'),
    patience,
  )
  const keys = await redis().keys('*dedupe*')
  expect(keys.filter((k) => k.includes(queueName))).toEqual([
    `bull:${queueName}:dedupe:${jobIdFor(event.id)}`,
  ])
  expect(await redis().keys(`scheduling-kit:worker:${queueName}:*`)).toEqual([])
})

it('warns once connected when the Redis behind the queue keeps no append-only file', async () => {
  // A Redis of this test's own (started with appendonly no): the shared one is left alone.
  const own = await ownRedis()
  const admin = new Redis(own.url)
  later(() => admin.quit())
  const warnings: string[] = []
  const queue = createBullMQQueue({
    connection: { url: own.url },
    queueName: uniqueQueue('aof'),
    logger: { warn: (m) => warnings.push(m) },
  })
  later(() => queue.close())
  await vi.waitFor(() => expect(warnings).toHaveLength(1), patience)
  expect(warnings[0]).toMatch(/appendonly no.*answered 200.*appendfsync everysec/)

  await admin.config('SET', 'appendonly', 'yes')
  const quiet: string[] = []
  const durable = createBullMQQueue({
    connection: { url: own.url },
    queueName: uniqueQueue('aof'),
    logger: { warn: (m) => quiet.push(m) },
  })
  later(() => durable.close())
  await durable.ready()
  // The check's CONFIG GET went first on the queue's one connection: once a later command is
  // answered, so was the check, and silence here is its verdict rather than a race.
  await durable.queue.getJobCounts('wait')
  await new Promise((r) => setImmediate(r))
  expect(quiet).toEqual([])
})
