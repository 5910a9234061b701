// The exact public surface of @scheduling-kit/postgres-queue, read from the built declarations.
import { expectExports, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { it } from 'vitest'

const NAMES = [
  'createPostgresQueue',
  'createPostgresWorker',
  'JobSettings',
  'jobIdFor',
  'migrate',
  'PostgresJobData',
  'PostgresQueueOptions',
  'PostgresQueueSettings',
  'PostgresWebhookQueue',
  'PostgresWorker',
  'PostgresWorkerOptions',
  'QueueMigrateOptions',
  'QueuePool',
]

it(
  '@scheduling-kit/postgres-queue exports exactly its names',
  async () => {
    await expectExports(new URL('../dist/', import.meta.url), NAMES, [
      'createPostgresQueue',
      'createPostgresWorker',
      'jobIdFor',
      'migrate',
    ])
  },
  TYPE_CHECK_TIMEOUT_MS,
)
