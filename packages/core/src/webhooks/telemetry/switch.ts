import { mayObserve } from '../../telemetry/registered.js'
import type { DeliveryObserver } from './contract.js'
import { defaultObserver } from './default.js'

// The handler's telemetry, used once something may record (an SDK registered with the
// OpenTelemetry API, or an API given to `useOpenTelemetry`): until then a delivery costs one
// property read, and `@opentelemetry/api` is not even loaded.

/** What `useOpenTelemetry` gave: the delivery telemetry, in every build. */
let given: DeliveryObserver | undefined

/** Called by `useOpenTelemetry`. */
export function giveObserver(observer: DeliveryObserver | undefined): void {
  given = observer
}

/**
 * The delivery telemetry when something may record, else `undefined`; a promise of it while the
 * node build loads its own (once, on the first delivery after an SDK registered).
 */
export function observer(): DeliveryObserver | Promise<DeliveryObserver> | undefined {
  return mayObserve() ? (given ?? defaultObserver?.()) : undefined
}
