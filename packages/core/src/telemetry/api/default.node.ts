// Where the node platform finds `@opentelemetry/api`: beside the telemetry that uses it, so the
// webhook path does not load `node:module`. See default.ts.
import { createRequire } from 'node:module'

/**
 * The app's `@opentelemetry/api` (an optional peer dependency), required from where this
 * package is installed; throws when the app does not have it. Its CommonJS and ESM copies
 * share the providers an SDK registers (they live on `globalThis`).
 */
export const loadOpenTelemetry = (): unknown => createRequire(import.meta.url)('@opentelemetry/api')
