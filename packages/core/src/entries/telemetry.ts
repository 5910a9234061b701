// @scheduling-kit/core/telemetry: OpenTelemetry, health checks and logging. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export { checkHealth } from '../health/health.js'
export type { HealthCheck, HealthChecked, HealthOptions, HealthReport } from '../health/report.js'
export type { Logger } from '../log.js'
export type { OpenTelemetryApi } from '../telemetry/otel.js'
export { OAUTH_REDACTED_PARAMS, redactOAuthSpan, redactOAuthUrl } from '../telemetry/redact.js'
export { useOpenTelemetry } from '../webhooks/telemetry/use.js'
