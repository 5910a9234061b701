// The metrics, made once per meter provider (the API has no proxy for meters: an SDK registered
// after the first delivery gets its instruments at the next call). `undefined` when the API is
// absent, turned off, or its provider is the no-op one: callers then skip their timing too.

import type * as Otel from '@opentelemetry/api'
import { onApiChange, otel, SCOPE } from './otel.js'

/** Bucket bounds in seconds, for durations from a fraction of a millisecond to a minute. */
const SECONDS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]

export interface Instruments {
  deliveries: Otel.Counter
  deliveryDuration: Otel.Histogram
  handlerDuration: Otel.Histogram
  enqueueFailures: Otel.Counter
  refreshes: Otel.Counter
  leaseWait: Otel.Histogram
  httpDuration: Otel.Histogram
  apiRetries: Otel.Counter
  reconcileDuration: Otel.Histogram
  reconcileAccounts: Otel.Counter
}

/** What the observable gauges read when a collection asks. */
export const observed = {
  /** Entry counts of the in-memory dedupe stores in use (held weakly). */
  dedupeStores: new Set<WeakRef<{ readonly size: number }>>(),
  /** When the last `reconcile()` of this process finished (`performance.now()`), if one did. */
  reconciledAt: undefined as number | undefined,
}

const forgotten = new FinalizationRegistry<WeakRef<{ readonly size: number }>>((ref) =>
  observed.dedupeStores.delete(ref),
)

/** Counts an in-memory dedupe store in `scheduling.webhook.dedupe.entries` while it lives. */
export function watchDedupeStore(store: { readonly size: number }): void {
  if (otel() === null) return
  const ref = new WeakRef(store)
  observed.dedupeStores.add(ref)
  forgotten.register(store, ref)
}

function make(meter: Otel.Meter): Instruments {
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      unit: 's',
      description,
      advice: { explicitBucketBoundaries: SECONDS },
    })
  meter
    .createObservableGauge('scheduling.webhook.dedupe.entries', {
      unit: '{entry}',
      description: 'Payload ids the in-memory dedupe stores of this process hold.',
    })
    .addCallback((result) => {
      let entries = 0
      let stores = 0
      for (const ref of observed.dedupeStores) {
        const store = ref.deref()
        if (store === undefined) observed.dedupeStores.delete(ref)
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
      if (observed.reconciledAt !== undefined)
        result.observe((performance.now() - observed.reconciledAt) / 1000)
    })
  return {
    deliveries: meter.createCounter('scheduling.webhook.deliveries', {
      unit: '{delivery}',
      description: 'Webhook deliveries answered, by status code and outcome.',
    }),
    deliveryDuration: seconds(
      'scheduling.webhook.delivery.duration',
      'Time from a delivery reaching the handler to its answer.',
    ),
    handlerDuration: seconds(
      'scheduling.webhook.handler.duration',
      'Time each handler function took, by event type.',
    ),
    enqueueFailures: meter.createCounter('scheduling.webhook.enqueue.failures', {
      unit: '{delivery}',
      description: 'Deliveries the queue did not accept (answered 503).',
    }),
    refreshes: meter.createCounter('scheduling.token.refreshes', {
      unit: '{refresh}',
      description: 'Token refreshes this process made, by outcome and cause of failure.',
    }),
    leaseWait: seconds(
      'scheduling.token.lease.wait',
      'Time a refresh waited for the key’s lease, by how the wait ended.',
    ),
    httpDuration: seconds(
      'http.client.request.duration',
      'Requests to the service’s API and token endpoint, each try on its own.',
    ),
    apiRetries: meter.createCounter('scheduling.api.retries', {
      unit: '{retry}',
      description: 'API requests tried again, by the status (or error) that caused it.',
    }),
    reconcileDuration: seconds(
      'scheduling.subscriptions.reconcile.duration',
      'Time one reconcile() run took.',
    ),
    reconcileAccounts: meter.createCounter('scheduling.subscriptions.reconcile.accounts', {
      unit: '{account}',
      description: 'Accounts reconcile() checked, by outcome.',
    }),
  }
}

let provider: unknown
let instruments: Instruments | undefined
onApiChange(() => {
  provider = undefined
  instruments = undefined
})

/** The instruments of the registered meter provider; `undefined` when nothing would record. */
export function meters(): Instruments | undefined {
  const a = otel()
  if (a === null) return undefined
  const current = a.metrics.getMeterProvider()
  if (current !== provider) {
    provider = current
    const meter = current.getMeter(SCOPE)
    instruments = meter === a.createNoopMeter() ? undefined : make(meter)
  }
  return instruments
}

/** Seconds since `start` (a `performance.now()`). */
export const since = (start: number): number => (performance.now() - start) / 1000
