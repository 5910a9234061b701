// The exact public surface of @scheduling-kit/bullmq, read from the built declarations.
import { expectExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { it } from 'vitest'

const NAMES = [
  'BullMQQueueOptions',
  'BullMQQueueSettings',
  'BullMQWebhookQueue',
  'ConnectionInput',
  'createBullMQQueue',
  'createWebhookWorker',
  'jobIdFor',
  'WebhookJobData',
  'WebhookWorker',
  'WebhookWorkerOptions',
]

it(
  '@scheduling-kit/bullmq exports exactly its names',
  async () => {
    await expectExports(new URL('../dist/', import.meta.url), NAMES, [
      'createBullMQQueue',
      'createWebhookWorker',
      'jobIdFor',
    ])
  },
  TYPE_CHECK_TIMEOUT_MS,
)
