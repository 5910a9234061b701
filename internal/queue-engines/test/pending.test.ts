// What each engine counts as not finished: the fault test relies on it to tell a job still held
// (not run yet) from one lost.
import { randomBytes } from 'node:crypto'
import { createTestEvent } from '@scheduling-kit/testing'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { bullmqPostgresEngine, pgBossEngine } from '../src/index.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: DATABASE_URL })
afterAll(() => admin.end())

describe.each([
  ['pg-boss', pgBossEngine],
  ['bullmq', bullmqPostgresEngine],
] as const)('%s', (_name, make) => {
  it('pending() counts the jobs queued and not yet run, one per delivery key', async () => {
    const schema = `sk_pending_${randomBytes(4).toString('hex')}`
    const engine = await make({
      connectionString: DATABASE_URL,
      schema,
      queueName: 'hooks',
      attempts: 3,
      backoffMs: 1_000,
    })
    try {
      expect(await engine.pending()).toBe(0)
      for (const key of ['a', 'b', 'c', 'a']) {
        await engine.queue.enqueue(
          createTestEvent('event.created'),
          { webhookId: undefined, secretIndex: 0, headers: {}, account: undefined },
          { key },
        )
      }
      expect(await engine.pending()).toBe(3)
    } finally {
      await engine.queue.close()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  })
})
