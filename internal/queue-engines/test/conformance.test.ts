// Both PostgreSQL engines through the shared queue battery, each test on a schema of its own.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { type QueueKit, runWebhookQueueConformance } from '@scheduling-kit/testing'
import pg from 'pg'
import { afterAll, describe, it } from 'vitest'
import {
  bullmqPostgresEngine,
  type Engine,
  type EngineOptions,
  pgBossEngine,
} from '../src/index.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: DATABASE_URL })
afterAll(() => admin.end())

async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

function kit(make: (options: EngineOptions) => Promise<Engine>): QueueKit {
  return {
    create: async ({ attempts, backoffMs }) => {
      const schema = `sk_engine_${randomBytes(4).toString('hex')}`
      const engine = await make({
        connectionString: DATABASE_URL,
        schema,
        queueName: 'hooks',
        attempts,
        backoffMs,
      })
      return {
        queue: engine.queue,
        worker: (o) => engine.worker(o),
        cleanup: async () => {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
        },
      }
    },
    unreachable: async () =>
      (
        await make({
          connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/test`,
          schema: 'sk_engine_unreachable',
          queueName: 'hooks',
          attempts: 1,
          backoffMs: 1_000,
        })
      ).queue,
  }
}

runWebhookQueueConformance(kit(pgBossEngine), {
  describe,
  it,
  name: 'pg-boss 10: WebhookQueue conformance',
})
runWebhookQueueConformance(kit(bullmqPostgresEngine), {
  describe,
  it,
  name: 'BullMQ 6 on PostgreSQL: WebhookQueue conformance',
})
