import type { AddressInfo } from 'node:net'
import { schedulingWebhooks } from '@scheduling-kit/express'
import { RedisDedupeStore } from '@scheduling-kit/redis'
import { createTestEvent, sendTestEvent, startFakeSchedulingService } from '@scheduling-kit/testing'
import express from 'express'
import { Redis } from 'ioredis'
import { expect, it } from 'vitest'
import { createBullMQQueue } from '../src/index.js'
import { later, ownRedis, uniqueQueue } from './helpers.js'

it('Redis down: the delivery is answered 503 at once, while Redis is still down; the service retry succeeds once Redis is back', async () => {
  const own = await ownRedis()
  const queueName = uniqueQueue('outage')
  const queue = createBullMQQueue({ connection: { url: own.url }, queueName })
  later(() => queue.close())
  await queue.ready()
  const service = await startFakeSchedulingService({ retrySchedule: [1_000, 1_000, 2_000, 4_000] })
  later(() => service.close())
  const app = express()
  const server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  later(() => new Promise((r) => server.close(r)))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const { webhookSecret, webhookId } = service.connectApp(url)
  app.use(schedulingWebhooks({ secret: webhookSecret, queue }))
  const endpoint = `${url}/webhooks/scheduling`

  // Up: stored, 200.
  const before = createTestEvent('event.created')
  expect((await sendTestEvent(endpoint, before, { secret: webhookSecret, webhookId })).status).toBe(
    200,
  )

  await own.stop()
  // Each answer comes while Redis is still down (it comes back only after these requests).
  for (let i = 0; i < 5; i++) {
    const res = await sendTestEvent(endpoint, createTestEvent('event.created'), {
      secret: webhookSecret,
      webhookId,
    })
    expect(res.status).toBe(503)
    expect(JSON.parse(res.body).error.code).toBe('queue_rejected')
  }
  // The refusal waits on nothing: the queue's client rejects at once (offline queue off), not
  // after the time-out backstop or a reconnection.
  const direct = createTestEvent('event.created')
  await expect(
    queue.enqueue(direct, { webhookId, secretIndex: 0, headers: {} }, { key: direct.id }),
  ).rejects.toThrow(/enableOfflineQueue|Redis is not connected/)

  // Through the service: refused while down, delivered by its retry once Redis is back.
  const { event, deliveries } = await service.trigger('event.canceled')
  expect(deliveries[0]!.status).toBe(503)
  await own.start()
  await service.idle()
  const attempts = service.deliveries().filter((d) => d.payloadId === event.id)
  expect(attempts.at(-1)!.status).toBe(200)
  const jobs = await queue.queue.getJobs(['wait'])
  expect(jobs.map((j) => j.data.event.id)).toContain(event.id)
}, 180_000)

it('Redis down with RedisDedupeStore on a client without the offline queue: answered 500 at once, nothing queued as handled', async () => {
  const own = await ownRedis()
  const client = new Redis(own.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  client.on('error', () => {})
  later(() => client.disconnect())
  await new Promise((r) => client.once('ready', r))
  const queue = createBullMQQueue({
    connection: { url: own.url },
    queueName: uniqueQueue('dedupe-down'),
  })
  later(() => queue.close())
  const app = express()
  const secret = 'outage-secret'
  app.use(
    schedulingWebhooks({ secret, queue, dedupe: new RedisDedupeStore({ client, logger: false }) }),
  )
  const server = app.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  later(() => new Promise((r) => server.close(r)))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/scheduling`
  const event = createTestEvent('event.created')
  await own.stop()
  // Each answer comes while Redis is still down (it comes back only after these requests).
  for (let i = 0; i < 3; i++) {
    const res = await sendTestEvent(endpoint, event, { secret })
    expect(res.status).toBe(500)
    expect(JSON.parse(res.body).error.code).toBe('handler_failed')
  }
  // The store's call rejects at once (offline queue off): nothing waits for a reconnection.
  await expect(new RedisDedupeStore({ client, logger: false }).claim('k', 'o')).rejects.toThrow(
    /enableOfflineQueue/,
  )
  // Back up: the retry is claimed, stored and answered 200.
  await own.start()
  await new Promise((r) => (client.status === 'ready' ? r(undefined) : client.once('ready', r)))
  await queue.ready()
  let retry = await sendTestEvent(endpoint, event, { secret })
  for (let i = 0; retry.status !== 200 && i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100))
    retry = await sendTestEvent(endpoint, event, { secret })
  }
  expect(retry.status).toBe(200)
  expect((await queue.queue.getJobs(['wait'])).map((j) => j.data.event.id)).toEqual([event.id])
}, 180_000)
