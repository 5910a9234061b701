import type { DeliveryObserver } from './contract.js'

// The node platform: the delivery telemetry found by itself once something registers with the
// OpenTelemetry API, loaded then (the first delivery after waits for it), never at start-up: an
// app that never starts an SDK loads none of it. See default.ts.

let loaded: DeliveryObserver | undefined
let loading: Promise<DeliveryObserver> | undefined

/** The delivery telemetry: at hand once loaded, else its loading. */
export function defaultObserver(): DeliveryObserver | Promise<DeliveryObserver> {
  if (loaded !== undefined) return loaded
  loading ??= import('./delivery.js').then(({ deliveryObserver }) => {
    loaded = deliveryObserver
    return deliveryObserver
  })
  return loading
}
