// The `node` build's allocation: no zero-filling of bytes that are overwritten at once. See
// default.ts.
import { Buffer } from 'node:buffer'
import { createRequire } from 'node:module'

/** A byte array of `length` that the caller fills whole at once, left unzeroed. */
export const bytesToFill = (length: number): Uint8Array => Buffer.allocUnsafeSlow(length)

/**
 * The app's `@opentelemetry/api` (an optional peer dependency), required from where this
 * package is installed; throws when the app does not have it. Its CommonJS and ESM copies
 * share the providers an SDK registers (they live on `globalThis`).
 */
export const loadOpenTelemetry = (): unknown => createRequire(import.meta.url)('@opentelemetry/api')
