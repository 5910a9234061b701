import type { DeliveryObserver } from './contract.js'

// The Web platform: no delivery telemetry until `useOpenTelemetry` gives it, so a bundle that
// never turns telemetry on carries none. Under the `node` and `deno` conditions the built
// package takes default.node.ts instead (`#platform`: rollup.config.mjs, package.json
// `imports`), where the API is found by itself.
export const defaultObserver: (() => DeliveryObserver | Promise<DeliveryObserver>) | undefined =
  undefined
