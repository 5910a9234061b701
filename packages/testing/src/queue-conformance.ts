import { ConfigError } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { queueDurability, queueRetries } from './queue-delivery-conformance.js'
import type { ProbedSpan, QueueKit, QueueTraceProbe, QueueUnderTest } from './queue-kit.js'
import { queueOnce, queueOrder } from './queue-order-conformance.js'
import { queueWhereHandlersAre } from './queue-replay.js'
import { queueTrace } from './queue-trace-conformance.js'

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
