// @scheduling-kit/core: what an app calls. What only adapters need is at
// `@scheduling-kit/core/adapter`. Every name here is pinned by test/exports.test.ts.

// ---- Calling the API ----------------------------------------------------------------------
export {
  createSchedulingClient,
  type SchedulingClient,
  type SchedulingClientOptions,
  type SchedulingUser,
} from './api/client.js'
export type { CursorPage, CursorPageOptions } from './api/paginate.js'
export type { ApiRetryOptions } from './api/retry.js'
export type { ApiWebhook, CreatedWebhook, WebhooksApi } from './api/webhooks.js'
export { ApiError, isApiError } from './api-error.js'
// ---- Credentials at rest ------------------------------------------------------------------
export {
  createCredentialCipher,
  generateCredentialKey,
  isSealedCredential,
} from './credentials/cipher.js'
export type { ReencryptResult } from './credentials/sealed.js'
export type {
  CredentialCipher,
  CredentialCipherOptions,
  CredentialContext,
  CredentialKey,
  OpenedCredential,
} from './credentials/types.js'
export { encryptSubscriptionStore, encryptTokenStore } from './credentials/wrap.js'
// ---- Errors -------------------------------------------------------------------------------
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
} from './error-codes.js'
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
} from './errors.js'
export type { HeadersInput } from './headers.js'
export {
  checkHealth,
  type HealthCheck,
  type HealthChecked,
  type HealthOptions,
  type HealthReport,
} from './health.js'
export type { FetchLike } from './http.js'
export type { Logger } from './log.js'
// ---- Connecting accounts (OAuth 2) ---------------------------------------------------------
export { createOAuthClient, type OAuthClient, type OAuthClientOptions } from './oauth/client.js'
export { type ReadConnectionOptions, readConnectedKey } from './oauth/connection.js'
export type { CookieSecrets } from './oauth/cookies.js'
export type { OAuthRequest, OAuthResponse, OAuthRoutesOptions } from './oauth/options.js'
export { createOAuthRoutes, type OAuthRoutes } from './oauth/routes.js'
export {
  ClosedError,
  CredentialError,
  IncompleteScanError,
  StaleWriteError,
  StoreFullError,
  StoreNotMigratedError,
  SubscriptionBusyError,
} from './store-errors.js'
// ---- Connected accounts' webhooks ---------------------------------------------------------
export type { WebhookOwner } from './subscriptions/lookup.js'
export type {
  EnsureResult,
  ReconcileAccount,
  ReconcileReport,
  RemoveResult,
  RotateResult,
  WebhookSubscriptions,
  WebhookSubscriptionsOptions,
} from './subscriptions/options.js'
export {
  MemorySubscriptionStore,
  type MemorySubscriptionStoreOptions,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
  type SubscriptionStore,
} from './subscriptions/store.js'
export { createWebhookSubscriptions } from './subscriptions/subscriptions.js'
export { type OpenTelemetryApi, useOpenTelemetry } from './telemetry/otel.js'
export { OAUTH_REDACTED_PARAMS, redactOAuthSpan, redactOAuthUrl } from './telemetry/redact.js'
// ---- Tokens -------------------------------------------------------------------------------
export {
  announceConnectionChange,
  type ConnectionApp,
  type ConnectionChange,
  type ConnectionStatus,
  type WebhookStatus,
} from './tokens/connection.js'
export type { TokenState, TokenStatus } from './tokens/machine.js'
export { createTokenManager, type GetTokenOptions, type TokenManager } from './tokens/manager.js'
export type { TokenManagerOptions } from './tokens/options.js'
export type { AccountInfo, TokenRecord, TokenSet } from './tokens/record.js'
export { MemoryTokenStore, type MemoryTokenStoreOptions, type TokenStore } from './tokens/store.js'
// ---- Receiving webhooks -------------------------------------------------------------------
export type { WebhookResponse } from './webhooks/answer.js'
export { type ConstructEventOptions, constructEvent } from './webhooks/construct.js'
// ---- Retries and duplicates ---------------------------------------------------------------
export {
  type ClaimResult,
  type DedupeStore,
  type EarlyEviction,
  MemoryDedupeStore,
  type MemoryDedupeStoreOptions,
} from './webhooks/dedupe.js'
// ---- Events -------------------------------------------------------------------------------
export { parseEnvelope } from './webhooks/envelope.js'
export {
  type AnyWebhookEvent,
  type CustomWebhookPayloads,
  type DefaultWebhookPayloads,
  EVENT_TYPES,
  type EventAttendee,
  type EventConferencing,
  type EventResource,
  type EventState,
  isEventType,
  isKnownEventType,
  type OpenRecord,
  type PayloadId,
  type SchedulingLink,
  type UnknownWebhookEvent,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookPayload,
} from './webhooks/events.js'
export {
  createWebhookHandler,
  type WebhookHandler,
  type WebhookRegistration,
} from './webhooks/handler.js'
export type {
  QueueDelivery,
  SubscriptionLookup,
  WebhookErrorContext,
  WebhookErrorFn,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
  WebhookQueue,
} from './webhooks/options.js'
export type { WebhookRequest } from './webhooks/receive.js'
export type {
  EventPattern,
  EventPrefixPattern,
  EventsMatching,
  HandlerMap,
  WebhookContext,
  WebhookHandlerFn,
} from './webhooks/registry.js'
export type { SecretSource } from './webhooks/secrets.js'
// ---- Signatures ---------------------------------------------------------------------------
export {
  matchSignature,
  type RawBody,
  type Secrets,
  signPayload,
  verifySignature,
} from './webhooks/signature.js'
