import assert from 'node:assert/strict'
import {
  createDeliveryLedger,
  createWebhookHandler,
  type LedgerEntry,
  MemoryLedgerStore,
} from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import { type It, type QueueKit, quiet, SECRET, serve, until, withQueue } from './queue-kit.js'
import { sendTestEvent } from './sign.js'

// The queue battery's delivery: answered 200 once its job is stored, 503 at once while the
// backend cannot take it, retried with backoff, dead in the ledger past its last attempt.

export function queueDurability(kit: QueueKit, it: It): void {
  it('a delivery is answered 200 once its job is stored: a worker started afterwards runs each once', async () => {
    await withQueue(kit, { attempts: 3, backoffMs: 20 }, async (q, later) => {
      const runs = new Map<string, number>()
      const handler = createWebhookHandler({
        secret: SECRET,
        queue: q.queue,
        logger: quiet,
        onAny: (event) => void runs.set(event.id, (runs.get(event.id) ?? 0) + 1),
      })
      const server = await serve(handler)
      later(server.close)
      const events = Array.from({ length: 20 }, () => createTestEvent('event.created'))
      const answers = await Promise.all(
        events.map((event) => sendTestEvent(server.url, event, { secret: SECRET })),
      )
      assert.deepEqual(
        answers.map((a) => a.status),
        Array(20).fill(200),
      )
      assert.equal(runs.size, 0, 'no worker yet: nothing ran')
      const worker = await q.worker({ handler, concurrency: 4 })
      later(worker.close)
      await until(() => runs.size === 20, kit.timeoutMs ?? 20_000, 'every job')
      assert.ok([...runs.values()].every((n) => n === 1))
    })
  })

  it('the backend unreachable: the delivery is answered 503 at once, and nothing runs', async () => {
    const queue = await kit.unreachable()
    try {
      let ran = 0
      const handler = createWebhookHandler({
        secret: SECRET,
        queue,
        logger: quiet,
        onAny: () => void ran++,
      })
      const server = await serve(handler)
      try {
        const started = Date.now()
        const answer = await sendTestEvent(server.url, createTestEvent('event.created'), {
          secret: SECRET,
        })
        assert.equal(answer.status, 503)
        // "At once": well within the service's patience, not after a long time-out.
        assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`)
        assert.equal(ran, 0)
      } finally {
        await server.close()
      }
    } finally {
      await queue.close().catch(() => {})
    }
  })
}

export function queueRetries(kit: QueueKit, it: It): void {
  it('a failing handler is retried with backoff until it succeeds; past its last attempt the delivery is dead in the ledger', async () => {
    await withQueue(kit, { attempts: 3, backoffMs: 20 }, async (q, later) => {
      const dead: LedgerEntry[] = []
      const ledger = createDeliveryLedger({
        store: new MemoryLedgerStore(),
        logger: quiet,
        onDeadLetter: (entry) => void dead.push(entry),
      })
      const attempts = new Map<string, number>()
      const handler = createWebhookHandler({
        secret: SECRET,
        queue: q.queue,
        ledger,
        logger: quiet,
        onAny: (event) => {
          const n = (attempts.get(event.id) ?? 0) + 1
          attempts.set(event.id, n)
          if (event.type === 'event.canceled') throw new Error('never works')
          if (n < 3) throw new Error(`fails on attempt ${n}`)
        },
      })
      const worker = await q.worker({ handler, ledger })
      later(worker.close)
      const server = await serve(handler)
      later(server.close)
      const ok = createTestEvent('event.created')
      const bad = createTestEvent('event.canceled')
      for (const event of [ok, bad])
        assert.equal((await sendTestEvent(server.url, event, { secret: SECRET })).status, 200)
      await until(
        async () => (await ledger.get(ok.id))?.status === 'done',
        kit.timeoutMs ?? 20_000,
        'the retried job to end done',
      )
      await until(
        async () => (await ledger.get(bad.id))?.status === 'dead',
        kit.timeoutMs ?? 20_000,
        'the failing job to end dead',
      )
      assert.equal(attempts.get(ok.id), 3)
      assert.equal(attempts.get(bad.id), 3, 'no attempt past the last')
      assert.match((await ledger.get(bad.id))?.lastError ?? '', /never works/)
      assert.deepEqual(
        dead.map((e) => e.id),
        [bad.id],
      )
    })
  })
}
