// The queue battery must fail a queue that breaks its promises: run by hand against an
// in-memory queue made broken one way at a time (it loses jobs, it runs a retried delivery
// twice, it never retries, it drops the delivery's trace, it drops a replay's job fields).

import { queueTraceProbe } from '@scheduling-kit/conformance/otel'
import type { DeliveryLedger, WebhookHandler, WebhookQueue } from '@scheduling-kit/core'
import { useOpenTelemetry } from '@scheduling-kit/core'
import {
  inJobSpan,
  jobKeyOf,
  type QueuedDelivery,
  queuedDelivery,
  runQueued,
} from '@scheduling-kit/core/queue'
import { describe, expect, it } from 'vitest'
import { type QueueKit, runWebhookQueueConformance } from '../src/index.js'

type Flaw = 'loses' | 'twice' | 'no-retry' | 'no-trace' | 'drops-replay' | 'none'

interface Job {
  key: string
  data: QueuedDelivery
  attempts: number
}

/** A queue in memory with workers polling it; `flaw` breaks one promise. */
function memoryKit(flaw: Flaw): QueueKit {
  return {
    timeoutMs: 3_000,
    create: async ({ attempts }) => {
      const jobs: Job[] = []
      const keys = new Set<string>()
      const stops: Array<() => void> = []
      const queue: WebhookQueue & { close(): Promise<void> } = {
        enqueue(event, context, delivery) {
          if (flaw === 'loses') return
          const key = jobKeyOf(delivery, event.id)
          if (flaw !== 'twice' && keys.has(key)) return
          keys.add(key)
          const data = queuedDelivery(event, context, delivery)
          // A queue of an older make: it keeps no replay or catch-up of the job's.
          if (flaw === 'drops-replay') {
            delete data.replay
            delete data.listedAt
          }
          jobs.push({ key, data, attempts: 0 })
        },
        close: async () => {
          for (const stop of stops) stop()
        },
      }
      const worker = async (o: { handler: WebhookHandler; ledger?: DeliveryLedger }) => {
        let stopped = false
        const loop = async () => {
          while (!stopped) {
            const job = jobs.shift()
            if (job === undefined) {
              await new Promise((r) => setTimeout(r, 5))
              continue
            }
            job.attempts++
            const final = flaw === 'no-retry' || job.attempts >= attempts
            const run = () =>
              runQueued(
                { handler: o.handler, ledger: o.ledger, claimMs: 1_000 },
                job.data,
                job.key,
                final,
              )
            try {
              // The job's span continues the delivery's trace, unless the flaw drops it.
              const outcome =
                flaw === 'no-trace'
                  ? await run()
                  : await inJobSpan(
                      {
                        system: 'memory',
                        destination: 'webhooks',
                        event: job.data.event,
                        trace: job.data.trace,
                      },
                      run,
                    )
              if (outcome === 'busy') jobs.push(job)
            } catch {
              if (!final) setTimeout(() => jobs.push(job), 10)
            }
          }
        }
        void loop()
        const stop = () => {
          stopped = true
        }
        stops.push(stop)
        return { close: async () => stop() }
      }
      return { queue, worker }
    },
    unreachable: async () => ({
      enqueue: () => Promise.reject(new Error('down')),
      close: async () => {},
    }),
    traces: () => queueTraceProbe(useOpenTelemetry),
  }
}

async function failures(flaw: Flaw): Promise<string[]> {
  const tests: Array<[string, () => Promise<void>]> = []
  runWebhookQueueConformance(memoryKit(flaw), {
    describe: (_name, fn) => fn(),
    it: (name, fn) => void tests.push([name, fn as () => Promise<void>]),
  })
  const failed: string[] = []
  for (const [name, fn] of tests) await fn().catch(() => failed.push(name))
  return failed
}

describe('runWebhookQueueConformance against an in-memory queue', () => {
  it('passes the queue that keeps its promises', async () => {
    expect(await failures('none')).toEqual([])
  }, 60_000)

  it("fails one that loses jobs, one that runs a retried delivery twice, one that never retries, one that drops the trace, one that drops a replay's or a catch-up's job fields", async () => {
    expect(await failures('loses')).toContainEqual(
      expect.stringMatching(/^a delivery is answered 200 once its job is stored/),
    )
    expect(await failures('twice')).toContainEqual(expect.stringMatching(/^never run twice/))
    expect(await failures('no-retry')).toContainEqual(
      expect.stringMatching(/^a failing handler is retried/),
    )
    expect(await failures('no-trace')).toEqual([
      expect.stringMatching(/^a delivery's trace crosses the queue/),
    ])
    expect(await failures('drops-replay')).toEqual([
      expect.stringMatching(/^the handlers only in the worker: a dead letter replayed/),
      expect.stringMatching(/^the handlers only in the worker: catchUp after an outage/),
    ])
  }, 120_000)
})
