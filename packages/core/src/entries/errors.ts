// @scheduling-kit/core/errors: every error class, its guard and its codes. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export { ApiError, isApiError } from '../errors/api.js'
export {
  type ClientErrorCode,
  type ConfigErrorCode,
  type CredentialErrorCode,
  OAUTH_FLOW_ERROR_STATUS,
  type OAuthFlowErrorCode,
  type SchedulingErrorCode,
  type StoreErrorCode,
  WEBHOOK_ERROR_STATUS,
  type WebhookErrorCode,
} from '../errors/codes.js'
export {
  isOAuthFlowError,
  NotConnectedError,
  OAuthFlowError,
  ReauthorizationRequiredError,
} from '../errors/connection.js'
export {
  ConfigError,
  isSchedulingError,
  isTransientError,
  isWebhookError,
  SchedulingError,
  WebhookError,
} from '../errors/errors.js'
export {
  ClosedError,
  CredentialError,
  IncompleteScanError,
  StaleWriteError,
  StoreFullError,
  StoreNotMigratedError,
  SubscriptionBusyError,
} from '../errors/store.js'
export {
  InvalidResponseError,
  ListTooLongError,
  NetworkError,
  OAuthError,
  RedirectRefusedError,
  TimeoutError,
} from '../errors/transport.js'
