// Where the default build finds `@opentelemetry/api`. The `node` build replaces this module with
// default.node.ts at bundle time (rollup.config.mjs).

/**
 * The app's `@opentelemetry/api`, when it can be found without an import this build cannot
 * make synchronously: here never (pass it to `useOpenTelemetry`); the node build requires it.
 */
export const loadOpenTelemetry = (): unknown => undefined
