// Order per Event kept by the queue itself (`orderByEvent`: pg-boss's key_strict_fifo), with no
// ledger: several workers, every change of an Event queued at once.
import { createWebhookHandler } from '@scheduling-kit/core'
import { createTestEvent } from '@scheduling-kit/testing'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  createPostgresQueue,
  createPostgresWorker,
  jobIdFor,
  type PostgresWebhookQueue,
} from '../src/index.js'
import { freshSchema, newPool, quiet } from './helpers.js'

const pool = newPool(undefined, 30)
afterAll(() => pool.end())

const EVENTS = 6
const CHANGES = 5
const context = { webhookId: undefined, secretIndex: 0, headers: {} } as never

/** Enqueues every change of every Event at once, in order per Event; resolves to the ids. */
async function enqueueAll(queue: PostgresWebhookQueue, run: string): Promise<string[][]> {
  const ids = Array.from({ length: EVENTS }, (_, e) =>
    Array.from({ length: CHANGES }, (_, c) => `payload_${run}_${e}_${c}`),
  )
  // One change of each Event at a time, all Events together: each Event's changes are
  // enqueued in their order.
  for (let c = 0; c < CHANGES; c++) {
    await Promise.all(
      ids.map((changes, e) =>
        queue.enqueue(
          createTestEvent('event.updated' as never, {
            id: changes[c] as `payload_${string}`,
            payload: { id: `evt_${run}_${e}` } as never,
          }),
          context,
          { key: changes[c]! },
        ),
      ),
    )
  }
  return ids
}

/** Three workers of 4 running every job; per Event: the most at once, and the order run. */
async function runAll(orderByEvent: boolean) {
  const schema = freshSchema()
  const run = schema.slice(-8)
  const queue = createPostgresQueue({ pool, schema, orderByEvent, logger: quiet })
  await queue.ready()
  const running = new Map<string, number>()
  const most = new Map<string, number>()
  const order = new Map<string, string[]>()
  const handler = createWebhookHandler({
    verify: false,
    logger: quiet,
    onAny: async (event) => {
      const resource = String((event as { payload: { id: string } }).payload.id)
      running.set(resource, (running.get(resource) ?? 0) + 1)
      most.set(resource, Math.max(most.get(resource) ?? 0, running.get(resource)!))
      await new Promise((r) => setTimeout(r, 250))
      order.set(resource, [...(order.get(resource) ?? []), event.id])
      running.set(resource, running.get(resource)! - 1)
    },
  })
  // Every change queued before the workers start: their first fetches find all of them.
  const ids = await enqueueAll(queue, run)
  const workers = Array.from({ length: 3 }, () =>
    createPostgresWorker({ handler, pool, schema, concurrency: 4, logger: quiet }),
  )
  try {
    await Promise.all(workers.map((w) => w.ready()))
    await vi.waitFor(() => expect([...order.values()].flat()).toHaveLength(EVENTS * CHANGES), {
      timeout: 60_000,
      interval: 50,
    })
    return { ids, most, order, run }
  } finally {
    await Promise.all(workers.map((w) => w.close()))
    await queue.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  }
}

describe('orderByEvent', () => {
  it('3 workers of 4, every change of 6 Events queued at once: one change of an Event at a time, in the order queued', async () => {
    const { ids, most, order, run } = await runAll(true)
    for (let e = 0; e < EVENTS; e++) {
      expect(most.get(`evt_${run}_${e}`), `most at once, Event ${e}`).toBe(1)
      expect(order.get(`evt_${run}_${e}`)).toEqual(ids[e])
    }
  })

  it('without it, the same run has changes of one Event at once (so the test above can fail)', async () => {
    const { most } = await runAll(false)
    expect(Math.max(...most.values())).toBeGreaterThan(1)
  })

  it('a change that failed every attempt holds its Event’s later changes, says so in health(), and a retry lets them run', async () => {
    const schema = freshSchema()
    const queue = createPostgresQueue({
      pool,
      schema,
      orderByEvent: true,
      attempts: 1,
      logger: quiet,
    })
    let failing = true
    const ran: string[] = []
    const handler = createWebhookHandler({
      verify: false,
      logger: quiet,
      onAny: async (event) => {
        if (failing && event.id.endsWith('_0')) throw new Error('the first change fails')
        ran.push(event.id)
      },
    })
    const worker = createPostgresWorker({ handler, pool, schema, logger: quiet })
    try {
      await Promise.all([queue.ready(), worker.ready()])
      const send = (id: string, resource: string) =>
        queue.enqueue(
          createTestEvent('event.updated' as never, {
            id: id as `payload_${string}`,
            payload: { id: resource } as never,
          }),
          context,
          { key: id },
        )
      await send('payload_held_0', 'evt_held')
      await send('payload_held_1', 'evt_held')
      await send('payload_other_1', 'evt_other')
      await vi.waitFor(() => expect(ran).toEqual(['payload_other_1']), { timeout: 20_000 })
      await new Promise((r) => setTimeout(r, 1_500))
      expect(ran).toEqual(['payload_other_1'])
      const health = await queue.health()
      expect(health.ok).toBe(false)
      expect(health.checks.find((c) => c.name === 'queue.blocked')?.detail).toMatch(
        /1 Event is held by a job that failed every attempt/,
      )
      failing = false
      await queue.boss.retry('scheduling-webhooks', jobIdFor('payload_held_0'))
      await vi.waitFor(
        () => expect(ran).toEqual(['payload_other_1', 'payload_held_0', 'payload_held_1']),
        { timeout: 20_000 },
      )
      expect((await queue.health()).ok).toBe(true)
    } finally {
      await worker.close()
      await queue.close()
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  })

  it('order per (account, Event): one account’s change that failed every attempt never holds another account’s changes of the same Event', async () => {
    const schema = freshSchema()
    const queue = createPostgresQueue({
      pool,
      schema,
      orderByEvent: true,
      attempts: 1,
      logger: quiet,
    })
    const ran: string[] = []
    const handler = createWebhookHandler({
      verify: false,
      logger: quiet,
      onAny: async (event, { account }) => {
        if (account === 'acct_a') throw new Error('account a fails')
        ran.push(event.id)
      },
    })
    const worker = createPostgresWorker({ handler, pool, schema, logger: quiet })
    try {
      await Promise.all([queue.ready(), worker.ready()])
      const send = (id: string, account: string) =>
        queue.enqueue(
          createTestEvent('event.updated' as never, {
            id: id as `payload_${string}`,
            payload: { id: 'evt_shared' } as never,
          }),
          { webhookId: undefined, secretIndex: 0, headers: {}, account } as never,
          { key: `${account}:${id}` },
        )
      await send('payload_a_0', 'acct_a')
      await send('payload_b_0', 'acct_b')
      await send('payload_b_1', 'acct_b')
      await vi.waitFor(() => expect(ran).toEqual(['payload_b_0', 'payload_b_1']), {
        timeout: 20_000,
      })
    } finally {
      await worker.close()
      await queue.close()
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  })

  it('an earlier version’s jobs, keyed by the Event alone, are keyed again under their account when the queue starts', async () => {
    const schema = freshSchema()
    const first = createPostgresQueue({ pool, schema, orderByEvent: true, logger: quiet })
    await first.ready()
    const event = createTestEvent('event.updated' as never, { payload: { id: 'evt_old' } as never })
    await first.boss.send(
      'scheduling-webhooks',
      { event, webhookId: undefined, secretIndex: 0, account: 'acct_a' },
      { singletonKey: 'event:evt_old' },
    )
    await first.boss.send(
      'scheduling-webhooks',
      { event, webhookId: undefined, secretIndex: 0 },
      { singletonKey: 'event:evt_plain' },
    )
    await first.close()
    const again = createPostgresQueue({ pool, schema, orderByEvent: true, logger: quiet })
    try {
      await again.ready()
      const { rows } = await pool.query(
        `SELECT singleton_key FROM ${schema}.job WHERE name = 'scheduling-webhooks' ORDER BY singleton_key`,
      )
      expect(rows.map((r: { singleton_key: string }) => r.singleton_key)).toEqual([
        'account-event:6:acct_a:evt_old',
        'event:evt_plain',
      ])
    } finally {
      await again.close()
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  })

  it('an existing queue keeps its order: made without it, a queue asking for it does not start, and says why', async () => {
    const schema = freshSchema()
    const warned: string[] = []
    const plain = createPostgresQueue({ pool, schema, logger: quiet })
    await plain.ready()
    const strict = createPostgresQueue({
      pool,
      schema,
      orderByEvent: true,
      logger: { warn: (m) => void warned.push(m) },
    })
    try {
      await vi.waitFor(() => expect(warned.join()).toMatch(/exists without order per Event/), {
        timeout: 10_000,
      })
      expect((await strict.health()).checks[0]).toMatchObject({ name: 'queue', ok: false })
    } finally {
      await strict.close()
      await plain.close()
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    }
  })
})
