import { createDeliveryLedger, createWebhookHandler, type LedgerEntry } from '@scheduling-kit/core'
import { RedisLedgerStore } from '@scheduling-kit/redis'
import { createTestEvent, signedRequest } from '@scheduling-kit/testing'
import { expect, it, vi } from 'vitest'
import { createBullMQQueue, createBullMQWorker } from '../src/index.js'
import { connection, later, redis, uniqueQueue } from './helpers.js'

// The queue and its worker with the delivery ledger on Redis: the handler records each
// delivery `received` once enqueued, the worker records how its job ended; a job that fails its
// last attempt is a dead letter there, and the handler's replay queues it for the worker once fixed.

const patience = { timeout: 15_000, interval: 20 }
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

it('the worker records each job in the ledger: done after retries, dead after its last attempt; a replay queues the dead one and the worker runs it', async () => {
  const queueName = uniqueQueue('ledger')
  const queue = createBullMQQueue({ connection, queueName, attempts: 3, backoffMs: 20 })
  later(() => queue.close())
  const dead: LedgerEntry[] = []
  const ledger = createDeliveryLedger({
    store: new RedisLedgerStore({ client: redis(), prefix: `${queueName}:ledger:`, logger: false }),
    logger: quiet,
    onDeadLetter: (entry) => void dead.push(entry),
  })
  const calls = new Map<string, number>()
  let fixed = false
  const handler = createWebhookHandler({
    secret: 'ledger-secret',
    queue,
    ledger,
    logger: quiet,
    onAny: (event) => {
      const n = (calls.get(event.id) ?? 0) + 1
      calls.set(event.id, n)
      if (event.type === 'event.canceled' && !fixed) throw new Error('always fails')
      if (n < 2) throw new Error(`fails on attempt ${n}`)
    },
  })
  const worker = createBullMQWorker({ handler, ledger, connection, queueName, logger: quiet })
  later(() => worker.close())
  const ok = createTestEvent('event.created')
  const bad = createTestEvent('event.canceled')
  for (const event of [ok, bad]) {
    const { body, headers } = await signedRequest(event, { secret: 'ledger-secret' })
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers,
      body,
    })
    expect(answer?.status).toBe(200)
    expect((await ledger.get(event.id))?.status).toBe('received')
  }
  await vi.waitFor(async () => expect((await ledger.get(ok.id))?.status).toBe('done'), patience)
  await vi.waitFor(async () => expect((await ledger.get(bad.id))?.status).toBe('dead'), patience)
  expect(await ledger.get(ok.id)).toMatchObject({ attempts: 2 })
  expect(await ledger.get(bad.id)).toMatchObject({ attempts: 3 })
  expect((await ledger.get(bad.id))?.lastError).toMatch(/always fails/)
  expect(dead.map((e) => e.id)).toEqual([bad.id])
  fixed = true
  // The handler has a queue: the replay is the worker's to run, and says so.
  expect(await handler.replay(bad.id)).toMatchObject({ replayed: 0, queued: 1 })
  await vi.waitFor(async () => expect((await ledger.get(bad.id))?.status).toBe('done'), patience)
  expect(await ledger.get(bad.id)).toMatchObject({ status: 'done', attempts: 4, source: 'replay' })
  expect(calls.get(bad.id)).toBe(4)
})
