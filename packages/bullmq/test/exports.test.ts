// The exact public surface of @scheduling-kit/bullmq, read from the built declarations.
import { fileURLToPath } from 'node:url'
import { exportedNames } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'BullMQQueueOptions',
  'BullMQWebhookQueue',
  'ConnectionInput',
  'createBullMQQueue',
  'createWebhookWorker',
  'jobIdFor',
  'WebhookJobData',
  'WebhookWorker',
  'WebhookWorkerOptions',
]

it('@scheduling-kit/bullmq exports exactly its names', async () => {
  for (const file of ['index.d.ts', 'index.d.cts']) {
    expect(exportedNames(fileURLToPath(new URL(`../dist/${file}`, import.meta.url)))).toEqual(
      [...NAMES].sort(),
    )
  }
  expect(Object.keys(await import('../dist/index.js')).sort()).toEqual(
    ['createBullMQQueue', 'createWebhookWorker', 'jobIdFor'].sort(),
  )
})
