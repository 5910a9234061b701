import { expectTraceAcrossQueue, installSdk, type TestSdk } from '@scheduling-kit/conformance/otel'
import { createWebhookHandler, signPayload, useOpenTelemetry } from '@scheduling-kit/core'
import { createTestEvent } from '@scheduling-kit/testing'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { createBullMQQueue, createBullMQWorker, jobIdFor } from '../src/index.js'
import { connection, later, uniqueQueue } from './helpers.js'

const SECRET = 'whsec_bullmq_telemetry'
const patience = { timeout: 15_000, interval: 20 }
let sdk: TestSdk
beforeEach(() => {
  sdk = installSdk(useOpenTelemetry)
})
afterEach(() => sdk.shutdown())

it('a delivery’s trace crosses the queue: the job’s process span continues it, with a link to the send span', async () => {
  const queueName = uniqueQueue('trace')
  const queue = createBullMQQueue({ connection, queueName })
  later(() => queue.close())
  const handled: string[] = []
  const handler = createWebhookHandler(SECRET, { queue }).on('event.created', (event) => {
    handled.push(event.id)
  })
  const worker = createBullMQWorker({ handler, connection, queueName })
  later(() => worker.close())
  const event = createTestEvent('event.created')
  const body = JSON.stringify(event)
  const answer = await handler.handle({
    method: 'POST',
    path: '/webhooks/scheduling',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': await signPayload(body, SECRET),
    },
    body,
  })
  expect(answer!.status).toBe(200)
  await vi.waitFor(() => expect(handled).toEqual([event.id]), patience)
  await vi.waitFor(() => expect(sdk.named(`process ${queueName}`)).toHaveLength(1), patience)

  expectTraceAcrossQueue(sdk, {
    queueName,
    system: 'bullmq',
    jobId: jobIdFor(event.id),
    payloadId: event.id,
  })
})

it('health(): the queue and the worker are ready while connected, and say what is wrong once closed', async () => {
  const queueName = uniqueQueue('health')
  const queue = createBullMQQueue({ connection, queueName })
  const worker = createBullMQWorker({
    handler: createWebhookHandler(SECRET),
    connection,
    queueName,
  })
  await Promise.all([queue.ready(), worker.ready()])
  expect(await queue.health()).toEqual({
    ok: true,
    checks: [{ name: 'redis', ok: true, ms: expect.any(Number) }],
  })
  expect((await worker.health()).checks.map((c) => [c.name, c.ok])).toEqual([
    ['worker', true],
    ['redis', true],
  ])
  const handler = createWebhookHandler(SECRET, { queue })
  expect((await handler.health()).checks.map((c) => c.name)).toEqual([
    'dedupe.memory',
    'queue.redis',
  ])
  await worker.close()
  await queue.close()
  const closed = await worker.health()
  expect(closed.ok).toBe(false)
  expect(closed.checks.map((c) => [c.name, c.ok, c.detail])).toEqual([
    ['worker', false, 'not running (closed, or not started)'],
    ['redis', false, expect.stringMatching(/^not connected \(/)],
  ])
  expect((await queue.health()).checks[0]).toMatchObject({ ok: false })
})
