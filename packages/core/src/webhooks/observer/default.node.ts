// The `node` build: the delivery telemetry at hand, used once something registers with the
// OpenTelemetry API. See default.ts.
export { deliveryObserver as defaultObserver } from '../observed.js'
