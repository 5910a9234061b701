// The metrics, made once per meter provider (the API has no proxy for meters: an SDK registered
// after the first delivery gets its instruments at the next call). `undefined` when the API is
// absent, turned off, or its provider is the no-op one: callers then skip their timing too.

import type * as Otel from '@opentelemetry/api'
import { apiGeneration, otel, SCOPE } from './otel.js'
import { dedupeStores, reconciled } from './watched.js'

/** Bucket bounds in seconds, for durations from a fraction of a millisecond to a minute. */
const SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]

/** A counter that never throws (an SDK's failure costs its data point, not the caller). */
export interface Counter {
  add(value: number, attributes?: Otel.Attributes): void
}
/** A histogram that never throws. */
export interface Histogram {
  record(value: number, attributes?: Otel.Attributes): void
}

export interface Instruments {
  deliveries: Counter
  deliveryDuration: Histogram
  handlerDuration: Histogram
  enqueueFailures: Counter
  refreshes: Counter
  leaseWait: Histogram
  httpDuration: Histogram
  apiRetries: Counter
  reconcileDuration: Histogram
  reconcileAccounts: Counter
}

const safeCounter = (counter: Otel.Counter): Counter => ({
  add(value, attributes) {
    try {
      counter.add(value, attributes)
    } catch {
      // Telemetry never changes an answer.
    }
  },
})

const safeHistogram = (histogram: Otel.Histogram): Histogram => ({
  record(value, attributes) {
    try {
      histogram.record(value, attributes)
    } catch {
      // Telemetry never changes an answer.
    }
  },
})

/** The gauges a collection reads: the in-memory dedupe stores' entries, the last reconcile's age. */
function observeGauges(meter: Otel.Meter): void {
  meter
    .createObservableGauge('scheduling.webhook.dedupe.entries', {
      unit: '{entry}',
      description: 'Payload ids the in-memory dedupe stores of this process hold.',
    })
    .addCallback((result) => {
      let entries = 0
      let stores = 0
      for (const ref of dedupeStores) {
        const store = ref.deref()
        if (store === undefined) dedupeStores.delete(ref)
        else {
          entries += store.size
          stores++
        }
      }
      if (stores > 0) result.observe(entries, { 'scheduling.dedupe.store': 'memory' })
    })
  meter
    .createObservableGauge('scheduling.subscriptions.reconcile.age', {
      unit: 's',
      description: 'Time since the last reconcile() of this process finished.',
    })
    .addCallback((result) => {
      if (reconciled.at !== undefined) result.observe((performance.now() - reconciled.at) / 1000)
    })
}

function make(meter: Otel.Meter): Instruments {
  const seconds = (name: string, description: string) =>
    safeHistogram(
      meter.createHistogram(name, {
        unit: 's',
        description,
        advice: { explicitBucketBoundaries: SECONDS },
      }),
    )
  const counter = (name: string, unit: string, description: string) =>
    safeCounter(meter.createCounter(name, { unit, description }))
  observeGauges(meter)
  return {
    deliveries: counter(
      'scheduling.webhook.deliveries',
      '{delivery}',
      'Webhook deliveries answered, by status code and outcome.',
    ),
    deliveryDuration: seconds(
      'scheduling.webhook.delivery.duration',
      'Time from a delivery reaching the handler to its answer.',
    ),
    handlerDuration: seconds(
      'scheduling.webhook.handler.duration',
      'Time each handler function took, by event type.',
    ),
    enqueueFailures: counter(
      'scheduling.webhook.enqueue.failures',
      '{delivery}',
      'Deliveries the queue did not accept (answered 503).',
    ),
    refreshes: counter(
      'scheduling.token.refreshes',
      '{refresh}',
      'Token refreshes this process made, by outcome and cause of failure.',
    ),
    leaseWait: seconds(
      'scheduling.token.lease.wait',
      'Time a refresh waited for the key’s lease, by how the wait ended.',
    ),
    httpDuration: seconds(
      'http.client.request.duration',
      'Requests to the service’s API and token endpoint, each try on its own.',
    ),
    apiRetries: counter(
      'scheduling.api.retries',
      '{retry}',
      'API requests tried again, by the status (or error) that caused it.',
    ),
    reconcileDuration: seconds(
      'scheduling.subscriptions.reconcile.duration',
      'Time one reconcile() run took.',
    ),
    reconcileAccounts: counter(
      'scheduling.subscriptions.reconcile.accounts',
      '{account}',
      'Accounts reconcile() checked, by outcome.',
    ),
  }
}

let provider: unknown
let instruments: Instruments | undefined
/** The API generation the instruments were made under (see `apiGeneration`). */
let madeUnder = -1

/** The instruments of the registered meter provider; `undefined` when nothing would record. */
export function meters(): Instruments | undefined {
  const a = otel()
  if (a === null) return undefined
  const current = a.metrics.getMeterProvider()
  if (current !== provider || madeUnder !== apiGeneration()) {
    provider = current
    madeUnder = apiGeneration()
    try {
      const meter = current.getMeter(SCOPE)
      instruments = meter === a.createNoopMeter() ? undefined : make(meter)
    } catch {
      // A provider that cannot make them: no metrics, nothing else changes.
      instruments = undefined
    }
  }
  return instruments
}

/** Seconds since `start` (a `performance.now()`). */
export const since = (start: number): number => (performance.now() - start) / 1000
