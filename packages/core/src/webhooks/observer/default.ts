import type { DeliveryObserver } from '../watching.js'

// The default (Web) build: no delivery telemetry until `useOpenTelemetry` gives it, so a bundle
// that never turns telemetry on carries none. The `node` build replaces this module with
// default.node.ts at bundle time (rollup.config.mjs), where the API is found by itself.
export const defaultObserver: (() => DeliveryObserver | Promise<DeliveryObserver>) | undefined =
  undefined
