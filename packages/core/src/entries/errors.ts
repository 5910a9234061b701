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
  ConfigError,
  InvalidResponseError,
  isOAuthFlowError,
  isSchedulingError,
  isTransientError,
  isWebhookError,
  NetworkError,
  NotConnectedError,
  OAuthError,
  OAuthFlowError,
  ReauthorizationRequiredError,
  RedirectRefusedError,
  SchedulingError,
  TimeoutError,
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
