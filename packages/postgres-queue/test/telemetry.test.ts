import { expectTraceAcrossQueue, installSdk, type TestSdk } from '@scheduling-kit/conformance/otel'
import { createWebhookHandler, signPayload, useOpenTelemetry } from '@scheduling-kit/core'
import { createTestEvent } from '@scheduling-kit/testing'
import { afterAll, afterEach, beforeEach, expect, it, vi } from 'vitest'
import { createPostgresQueue, createPostgresWorker, jobIdFor } from '../src/index.js'
import { freshSchema, newPool, quiet } from './helpers.js'

const SECRET = 'whsec_pgq_telemetry'
const patience = { timeout: 20_000, interval: 20 }
const pool = newPool()
afterAll(() => pool.end())
let sdk: TestSdk
beforeEach(() => {
  sdk = installSdk(useOpenTelemetry)
})
afterEach(() => sdk.shutdown())

it('a delivery’s trace crosses the queue: the job’s process span continues it, with a link to the send span', async () => {
  const schema = freshSchema()
  const queueName = 'traced'
  const queue = createPostgresQueue({ pool, schema, queueName, logger: quiet })
  const handled: string[] = []
  const handler = createWebhookHandler(SECRET, { queue }).on('event.created', (event) => {
    handled.push(event.id)
  })
  const worker = createPostgresWorker({ handler, pool, schema, queueName, logger: quiet })
  try {
    await Promise.all([queue.ready(), worker.ready()])
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
      system: 'pg-boss',
      jobId: jobIdFor(event.id),
      payloadId: event.id,
    })
  } finally {
    await worker.close()
    await queue.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
})
