// The exact public surface of @scheduling-kit/bullmq, read from the built declarations.
import { expectExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'BullMQQueueOptions',
  'BullMQQueueSettings',
  'BullMQWebhookQueue',
  'ConnectionInput',
  'createBullMQQueue',
  'createBullMQWorker',
  'jobIdFor',
  'WebhookJobData',
  'BullMQWorker',
  'BullMQWorkerOptions',
  // The worker's first names, kept beside the ones named like @scheduling-kit/postgres-queue's.
  'createWebhookWorker',
  'WebhookWorker',
  'WebhookWorkerOptions',
]

it(
  '@scheduling-kit/bullmq exports exactly its names',
  async () => {
    await expectExports(new URL('../dist/', import.meta.url), NAMES, [
      'createBullMQQueue',
      'createBullMQWorker',
      'createWebhookWorker',
      'jobIdFor',
    ])
  },
  TYPE_CHECK_TIMEOUT_MS,
)

it('createWebhookWorker is createBullMQWorker, under its first name', async () => {
  const built = await import(new URL('../dist/index.js', import.meta.url).href)
  expect(built.createWebhookWorker).toBe(built.createBullMQWorker)
})
