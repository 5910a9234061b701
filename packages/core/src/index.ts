export {
  createSchedulingClient,
  type SchedulingClient,
  type SchedulingClientOptions,
  type SchedulingUser,
} from './api/client.js'
export {
  type BodySource,
  DEFAULT_BODY_TIMEOUT_MS,
  type FrameworkName,
  readBody,
  tooLarge as payloadTooLargeError,
} from './body.js'
export { type ConstructEventOptions, constructEvent } from './construct.js'
export {
  type ClaimResult,
  DEFAULT_DEDUPE_ENTRIES,
  type DedupeStore,
  type EarlyEviction,
  MemoryDedupeStore,
  type MemoryDedupeStoreOptions,
} from './dedupe.js'
export { parseEnvelope } from './envelope.js'
export {
  ApiError,
  type ClientErrorCode,
  ConfigError,
  type ConfigErrorCode,
  InvalidResponseError,
  isSchedulingError,
  isTransientError,
  isWebhookError,
  NetworkError,
  NotConnectedError,
  OAUTH_FLOW_ERROR_STATUS,
  OAuthError,
  OAuthFlowError,
  type OAuthFlowErrorCode,
  ReauthorizationRequiredError,
  SchedulingError,
  type SchedulingErrorCode,
  StaleWriteError,
  TimeoutError,
  WEBHOOK_ERROR_STATUS,
  WebhookError,
  type WebhookErrorCode,
} from './errors.js'
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
} from './events.js'
export {
  attachWebhookMethods,
  createWebhookHandler,
  DEFAULT_BODY_LIMIT,
  DEFAULT_WEBHOOK_PATH,
  type WebhookErrorContext,
  type WebhookErrorFn,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookMethods,
  type WebhookQueue,
  type WebhookRequest,
  type WebhookResponse,
} from './handler.js'
export { getHeader, type HeadersInput } from './headers.js'
export type { FetchLike } from './http.js'
export { createOAuthClient, type OAuthClient, type OAuthClientOptions } from './oauth/client.js'
export { safeReturnTo } from './oauth/redirect.js'
export {
  CONNECTION_COOKIE,
  createOAuthRoutes,
  type OAuthRequest,
  type OAuthResponse,
  type OAuthRoutes,
  type OAuthRoutesOptions,
  readConnectedKey,
  STATE_COOKIE,
} from './oauth/routes.js'
export type {
  EventPattern,
  EventPrefixPattern,
  EventsMatching,
  HandlerMap,
  WebhookContext,
  WebhookHandlerFn,
} from './registry.js'
export type { SecretSource } from './secrets.js'
export {
  matchSignature,
  parseSignatureHeader,
  type RawBody,
  type Secrets,
  signPayload,
  verifySignature,
} from './signature.js'
export {
  actionFor,
  INITIAL_TOKEN_STATE,
  type TokenAction,
  type TokenEvent,
  type TokenState,
  type TokenStatus,
  type TokenTimes,
  transition,
} from './tokens/machine.js'
export {
  createTokenManager,
  type GetTokenOptions,
  type TokenManager,
  type TokenManagerOptions,
} from './tokens/manager.js'
export type { AccountInfo, TokenRecord, TokenSet } from './tokens/record.js'
export { MemoryTokenStore, type MemoryTokenStoreOptions, type TokenStore } from './tokens/store.js'
export {
  DEFAULT_SIGNATURE_HEADER,
  DEFAULT_WEBHOOK_ID_HEADER,
  type HeaderNames,
  type Verified,
  verifyRequest,
} from './verify.js'
