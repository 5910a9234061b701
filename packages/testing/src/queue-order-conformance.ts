import assert from 'node:assert/strict'
import {
  type AnyWebhookEvent,
  createDeliveryLedger,
  createWebhookHandler,
  MemoryLedgerStore,
} from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import { type It, type QueueKit, quiet, SECRET, serve, until, withQueue } from './queue-kit.js'
import { sendTestEvent } from './sign.js'

/**
 * Today (UTC) at `hour`:00:`second`: a delivery's time within the handler's horizon (maxAgeMs),
 * the same in every process of a test.
 */
const todayAt = (hour: number, second: number) => {
  const now = new Date()
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, 0, second)
}

// The queue battery's once and in order: each delivery run once across instances and workers,
// each Event's changes one at a time with the newest applied last.

export function queueOnce(kit: QueueKit, it: It): void {
  it('never run twice: each of 40 deliveries sent to two app instances at once (each its own dedupe), three workers: each runs once', async () => {
    await withQueue(kit, { attempts: 3, backoffMs: 20 }, async (q, later) => {
      const runs = new Map<string, number>()
      const instance = () =>
        createWebhookHandler({
          secret: SECRET,
          queue: q.queue,
          logger: quiet,
          onAny: async (event) => {
            runs.set(event.id, (runs.get(event.id) ?? 0) + 1)
            await new Promise((r) => setTimeout(r, 5))
          },
        })
      const handler = instance()
      for (let i = 0; i < 3; i++) {
        const worker = await q.worker({ handler, concurrency: 4 })
        later(worker.close)
      }
      const a = await serve(handler)
      const b = await serve(instance())
      later(a.close)
      later(b.close)
      const events = Array.from({ length: 40 }, () => createTestEvent('event.created'))
      const answers = await Promise.all(
        events.flatMap((event) =>
          [a, b].map((app) => sendTestEvent(app.url, event, { secret: SECRET })),
        ),
      )
      assert.ok(answers.every((a) => a.status === 200))
      await until(() => runs.size === 40, kit.timeoutMs ?? 20_000, 'every job')
      // A late second run would show now.
      await new Promise((r) => setTimeout(r, 300))
      assert.ok(
        [...runs.values()].every((n) => n === 1),
        JSON.stringify([...runs.entries()].filter(([, n]) => n !== 1)),
      )
    })
  })
}

export function queueOrder(kit: QueueKit, it: It): void {
  it("each Event's changes, sent in any order to several workers with a ledger: one at a time, the newest applied last", async () => {
    await withQueue(kit, { attempts: 3, backoffMs: 20 }, async (q, later) => {
      const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), logger: quiet })
      const running = new Set<string>()
      const overlaps: string[] = []
      const state = new Map<string, string>()
      const handler = createWebhookHandler({
        secret: SECRET,
        queue: q.queue,
        ledger,
        logger: quiet,
        onAny: async (event: AnyWebhookEvent) => {
          const { id, state: now } = event.payload as { id: string; state: string }
          if (running.has(id)) overlaps.push(id)
          running.add(id)
          await new Promise((r) => setTimeout(r, 5))
          state.set(id, now)
          running.delete(id)
        },
      })
      for (let i = 0; i < 2; i++) {
        const worker = await q.worker({ handler, ledger, concurrency: 8 })
        later(worker.close)
      }
      const server = await serve(handler)
      later(server.close)
      const types = ['event.created', 'event.rescheduled', 'event.canceled']
      const events = Array.from({ length: 6 }, (_, e) =>
        types.map((type, i) =>
          createTestEvent(type, {
            occurred_at: new Date(todayAt(10, i)).toISOString(),
            payload: { id: `event_order_${e}`, state: i === 2 ? 'canceled' : 'confirmed' },
          }),
        ),
      ).flat()
      const shuffled = [...events].sort(() => Math.random() - 0.5)
      for (const event of shuffled)
        assert.equal((await sendTestEvent(server.url, event, { secret: SECRET })).status, 200)
      await until(
        async () => {
          for (const event of events) {
            const status = (await ledger.get(event.id))?.status
            if (status !== 'done' && status !== 'stale') return false
          }
          return true
        },
        kit.timeoutMs ?? 20_000,
        'every change done or stale',
      )
      assert.deepEqual(overlaps, [], 'two changes of one Event ran at once')
      for (let e = 0; e < 6; e++) assert.equal(state.get(`event_order_${e}`), 'canceled')
    })
  })
}
