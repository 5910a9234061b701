// @scheduling-kit/core/telemetry: OpenTelemetry, health checks and logging. The root re-exports it whole.
// Every name here is pinned by test/exports.test.ts.

export {
  checkHealth,
  type HealthCheck,
  type HealthChecked,
  type HealthOptions,
  type HealthReport,
} from '../health/health.js'
export type { Logger } from '../log.js'
export { type OpenTelemetryApi, useOpenTelemetry } from '../telemetry/otel.js'
export { OAUTH_REDACTED_PARAMS, redactOAuthSpan, redactOAuthUrl } from '../telemetry/redact.js'
