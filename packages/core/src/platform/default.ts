// What the default build allocates bytes with. The `node` build replaces this module with
// default.node.ts at bundle time (tsup.config.ts).

/** A byte array of `length` that the caller fills whole at once (zeroed here; not on Node). */
export const bytesToFill = (length: number): Uint8Array => new Uint8Array(length)

/**
 * The app's `@opentelemetry/api`, when it can be found without an import this build cannot
 * make synchronously: here never (pass it to `useOpenTelemetry`); the node build requires it.
 */
export const loadOpenTelemetry = (): unknown => undefined
