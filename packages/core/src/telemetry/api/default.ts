// Where the Web platform finds `@opentelemetry/api`. Under the `node` and `deno` conditions the
// built package takes default.node.ts instead (`#telemetry/api`: rollup.config.mjs, package.json
// `imports`).

/**
 * The app's `@opentelemetry/api`, when it can be found without an import this platform cannot
 * make synchronously: here never (pass it to `useOpenTelemetry`); the node platform requires it.
 */
export const loadOpenTelemetry = (): unknown => undefined
