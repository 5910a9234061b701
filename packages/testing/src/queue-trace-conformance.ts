import assert from 'node:assert/strict'
import { createWebhookHandler } from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import {
  type It,
  type QueueKit,
  type QueueTraceProbe,
  quiet,
  SECRET,
  serve,
  until,
  withQueue,
} from './queue-kit.js'
import { sendTestEvent } from './sign.js'

// The queue battery's trace: a delivery's trace carried into the worker that runs it.

export function queueTrace(kit: QueueKit, traces: () => QueueTraceProbe, it: It): void {
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
