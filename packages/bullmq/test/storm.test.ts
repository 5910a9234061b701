import { type ChildProcess, fork } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { schedulingWebhooks } from '@scheduling-kit/express'
import { RedisDedupeStore } from '@scheduling-kit/redis'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import express from 'express'
import { expect, it } from 'vitest'
import { createBullMQQueue } from '../src/index.js'
import { connection, later, REDIS_URL, redis, uniqueQueue } from './helpers.js'

const DELIVERIES = 2_000

function startWorker(queueName: string, prefix: string): Promise<ChildProcess> {
  const child = fork(new URL('./fixtures/storm-worker.mjs', import.meta.url), [], {
    env: { ...process.env, REDIS_URL, QUEUE: queueName, P: prefix },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  later(() => child.kill('SIGKILL'))
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child))
    child.once('exit', (code) =>
      reject(new Error(`the worker exited (${code}) before it was ready`)),
    )
  })
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

it(`${DELIVERIES} signed deliveries through Express into BullMQ; the worker fails 30% of first attempts and is killed and restarted mid-run: 0 lost, 0 handled twice`, async () => {
  const queueName = uniqueQueue('storm')
  const prefix = `${queueName}:`
  const db = redis()
  const service = await startFakeSchedulingService({ retrySchedule: [100, 200, 400, 800, 1_600] })
  later(() => service.close())
  const queue = createBullMQQueue({ connection, queueName, backoffMs: 50 })
  later(() => queue.close())
  const app = express()
  const settings = {
    secret: '',
    queue,
    dedupe: new RedisDedupeStore({ client: db, prefix, logger: false }),
  }
  const server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  later(() => new Promise((r) => server.close(r)))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { webhookSecret } = service.connectApp(url)
  app.use(schedulingWebhooks({ ...settings, secret: webhookSecret }))

  const first = await startWorker(queueName, prefix)
  const sent: string[] = []
  const sending = (async () => {
    let next = 0
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < DELIVERIES) {
          next++
          const { event } = await service.trigger('event.created')
          sent.push(event.id)
        }
      }),
    )
  })()

  // Mid-run: close the gate, wait until all 8 of the worker's slots are held at it (no job
  // between its handler's end and its completion), kill the worker, open the gate, restart.
  await until('a third handled', async () => (await db.llen(`${prefix}handled`)) >= DELIVERIES / 3)
  await db.set(`${prefix}gate`, 'closed')
  await until('8 jobs at the gate', async () => (await db.scard(`${prefix}blocked`)) >= 8)
  first.kill('SIGKILL')
  await new Promise((r) => first.once('exit', r))
  const handledAtKill = await db.llen(`${prefix}handled`)
  await db.del(`${prefix}gate`)
  await startWorker(queueName, prefix)

  await sending
  await service.idle()
  await until('every job completed', async () => {
    const counts = await queue.queue.getJobCounts('completed')
    return counts.completed === DELIVERIES
  })
  const handled = await db.lrange(`${prefix}handled`, 0, -1)
  const counts = await queue.queue.getJobCounts('completed', 'failed', 'wait', 'active', 'delayed')
  expect(counts).toEqual({ completed: DELIVERIES, failed: 0, wait: 0, active: 0, delayed: 0 })
  expect(handled.length, 'handled twice').toBe(new Set(handled).size)
  expect(new Set(handled), 'lost').toEqual(new Set(sent))
  expect(handledAtKill).toBeLessThan(DELIVERIES)
  expect(
    service.deliveries().every((d) => d.ok),
    'every delivery answered 200',
  ).toBe(true)
  // The first attempts that failed came back through the retries: about 30%.
  const retried = (await Promise.all(sent.map((id) => db.get(`${prefix}attempts:${id}`)))).filter(
    (n) => Number(n) > 1,
  ).length
  expect(retried).toBeGreaterThan(DELIVERIES * 0.2)
  expect(retried).toBeLessThan(DELIVERIES * 0.4)
}, 120_000)
