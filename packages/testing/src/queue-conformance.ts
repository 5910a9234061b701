import assert from 'node:assert/strict'
import {
  type AnyWebhookEvent,
  ConfigError,
  createDeliveryLedger,
  createWebhookHandler,
  type LedgerEntry,
  MemoryLedgerStore,
} from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { createTestEvent } from './events.js'
import {
  type It,
  type ProbedSpan,
  type QueueKit,
  type QueueTraceProbe,
  type QueueUnderTest,
  quiet,
  SECRET,
  serve,
  until,
  withQueue,
} from './queue-kit.js'
import { queueWhereHandlersAre } from './queue-replay.js'
import { sendTestEvent } from './sign.js'

export type { ProbedSpan, QueueKit, QueueTraceProbe, QueueUnderTest }

// The battery a durable `WebhookQueue` and its worker must pass, over real HTTP: a delivery is
// answered 200 only once its job is stored (a worker started later runs it), 503 at once while
// the backend cannot take it, retried with backoff, a dead letter in the ledger after its last
// attempt, never run twice (one job per delivery; several workers), and each Event's changes
// applied in order with the newest last, whatever order the workers take them in; given an
// OpenTelemetry SDK, the delivery's trace carried into the worker.

/**
 * Runs the queue battery against `kit`'s queue and worker.
 *
 * @example
 * ```ts
 * runWebhookQueueConformance(
 *   {
 *     create: async ({ attempts, backoffMs }) => {
 *       const queueName = uniqueName()
 *       return {
 *         queue: createBullMQQueue({ connection, queueName, attempts, backoffMs }),
 *         worker: async ({ handler, ledger, concurrency }) =>
 *           createBullMQWorker({ handler, ledger, connection, queueName, concurrency }),
 *       }
 *     },
 *     unreachable: async () => createBullMQQueue({ connection: { port: closedPort } }),
 *   },
 *   { describe, it },
 * )
 * ```
 */
export function runWebhookQueueConformance(kit: QueueKit, options: StoreConformanceOptions): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function')
    throw new ConfigError(
      'runWebhookQueueConformance: pass { describe, it } from your test runner.',
    )
  describe(options.name ?? 'WebhookQueue conformance', () => {
    queueDurability(kit, it)
    queueRetries(kit, it)
    queueOnce(kit, it)
    queueOrder(kit, it)
    queueWhereHandlersAre(kit, it)
    if (kit.traces !== undefined) queueTrace(kit, kit.traces, it)
  })
}

function queueTrace(kit: QueueKit, traces: () => QueueTraceProbe, it: It): void {
  it("a delivery's trace crosses the queue: the worker's process span continues it, as the send span's child and linked to it, the handler's span under it", async () => {
    const probe = traces()
    try {
      await withQueue(kit, { attempts: 1, backoffMs: 20 }, async (q, later) => {
        let ran = 0
        const handler = createWebhookHandler({
          secret: SECRET,
          queue: q.queue,
          logger: quiet,
          onAny: () => void ran++,
        })
        const server = await serve(handler)
        later(server.close)
        const worker = await q.worker({ handler })
        later(worker.close)
        const answer = await sendTestEvent(server.url, createTestEvent('event.created'), {
          secret: SECRET,
        })
        assert.equal(answer.status, 200)
        await until(() => ran === 1, kit.timeoutMs ?? 20_000, 'the job')
        const named = (test: (name: string) => boolean) =>
          probe.spans().filter((span) => test(span.name))
        // The job's span ends after its handler's: wait for both to be finished.
        await until(
          () =>
            named((n) => n === 'scheduling.webhook.handler').length === 1 &&
            named((n) => n.startsWith('process ')).length === 1,
          kit.timeoutMs ?? 20_000,
          "the job's and the handler's spans",
        )
        const [delivery] = named((n) => n === 'scheduling.webhook.delivery')
        const [send] = named((n) => n.startsWith('send '))
        const [job] = named((n) => n.startsWith('process '))
        const [fn] = named((n) => n === 'scheduling.webhook.handler')
        assert.ok(delivery && send && job && fn, 'a delivery, send, process and handler span')
        assert.equal(send.traceId, delivery.traceId, 'the send span is in the delivery’s trace')
        assert.equal(job.traceId, delivery.traceId, 'the job continues the delivery’s trace')
        assert.equal(job.parentSpanId, send.spanId, 'the job’s parent is the send span')
        assert.deepEqual(job.links, [send.spanId], 'the job links to the send span')
        assert.equal(fn.parentSpanId, job.spanId, 'the handler runs under the job')
      })
    } finally {
      await probe.close()
    }
  })
}

function queueDurability(kit: QueueKit, it: It): void {
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

function queueRetries(kit: QueueKit, it: It): void {
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

function queueOnce(kit: QueueKit, it: It): void {
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

function queueOrder(kit: QueueKit, it: It): void {
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
            occurred_at: new Date(Date.UTC(2024, 4, 1, 10, 0, i)).toISOString(),
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
