import { type OpenTelemetryApi, setOpenTelemetry } from '../../telemetry/otel.js'
import { deliveryObserver } from './delivery.js'
import { giveObserver } from './switch.js'

/**
 * Which OpenTelemetry API scheduling-kit reports through. On Node (and Bun and Deno) it finds
 * `@opentelemetry/api` by itself once an SDK registers with it; elsewhere (workerd, browsers),
 * or to use another copy of it, pass the module. `false` turns telemetry off: no span, no
 * metric, not even the API's no-op calls.
 *
 * @example
 * ```ts
 * import * as api from '@opentelemetry/api'
 * useOpenTelemetry(api)
 * ```
 */
export function useOpenTelemetry(given: OpenTelemetryApi | false): void {
  setOpenTelemetry(given)
  giveObserver(given === false ? undefined : deliveryObserver)
}
