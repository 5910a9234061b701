// Every error code, each belonging to one class (test/errors/errors.test.ts checks no code is in two).

/** Codes of errors raised while receiving a webhook, each with the HTTP status it answers with. */
export const WEBHOOK_ERROR_STATUS = {
  not_found: 404,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  body_timeout: 408,
  signature_missing: 401,
  signature_invalid: 401,
  secret_whitespace: 401,
  secret_unknown: 401,
  invalid_json: 400,
  invalid_envelope: 400,
  invalid_type: 400,
  invalid_id: 400,
  /**
   * A verified body of the vendor's other product (its envelope: an `evt_` id, `data.type`): a
   * set-up mistake no retry mends, answered 200 so the service stops, told to `onError`.
   */
  other_product: 200,
  /**
   * A body whose signed `occurred_at` is older than the handler's `maxAgeMs` (past what the
   * record can tell a retry from a replay): not run, answered 200, told to `onError`.
   */
  too_old: 200,
  delivery_in_progress: 409,
  body_parsed: 500,
  handler_failed: 500,
  queue_rejected: 503,
  /** Bodies still arriving hold `maxPendingBytes` already: answered without reading this one. */
  server_busy: 503,
  /**
   * Not an answer: told to `onError` (at most once a minute) when the in-memory dedupe store
   * had to forget a payload id before its time; the delivery itself was answered normally.
   */
  dedupe_evicted: 200,
} as const

export type WebhookErrorCode = keyof typeof WEBHOOK_ERROR_STATUS

/** Codes of errors raised when the library is configured wrongly. */
export type ConfigErrorCode = 'invalid_options'

/** Codes of errors raised while talking to the service (OAuth, tokens, API). */
export type ClientErrorCode =
  | 'oauth_error'
  | 'network_error'
  | 'timeout'
  | 'invalid_response'
  | 'api_error'
  | 'not_connected'
  | 'reauthorization_required'
  | 'stale_write'
  | 'closed'
  | 'subscription_busy'
  /** The server answered with a redirect (3xx): never followed, nothing re-sent, nothing kept. */
  | 'redirect_refused'
  /** A list went on past its page count or its time bound (`maxPages`, `timeoutMs`). */
  | 'list_too_long'

/** Codes of errors the OAuth routes answer with, each with its HTTP status. */
export const OAUTH_FLOW_ERROR_STATUS = {
  state_missing: 400,
  state_invalid: 400,
  state_mismatch: 400,
  /** The authorization server (or the account owner on its consent page) refused: `error=access_denied`. */
  access_denied: 403,
  authorization_failed: 400,
  /** The callback's `iss` names another authorization server than the one configured (RFC 9207). */
  issuer_mismatch: 400,
  code_missing: 400,
  token_exchange_failed: 502,
  identify_failed: 502,
  state_used: 400,
  /** The state store (`stateStore`) failed while the state was being claimed. */
  state_store_failed: 500,
  /** The token store failed to save or delete the tokens. */
  store_failed: 500,
  /** The `key` option threw or rejected. */
  key_failed: 500,
  /** `onConnected` threw or rejected; the tokens were stored. */
  connected_hook_failed: 500,
  /** The `disconnectKey` option threw or rejected. */
  disconnect_key_failed: 500,
  /** `onDisconnected` threw or rejected; the tokens were deleted. */
  disconnected_hook_failed: 500,
  /** Something else failed unexpectedly while answering a route. */
  flow_failed: 500,
  cross_origin: 403,
  /** `/disconnect` found no connected account (no connection cookie, or `disconnectKey` gave none). */
  nothing_to_disconnect: 401,
  /** A route was called with another method than its own (its `Allow` header names it). */
  route_method_not_allowed: 405,
} as const

export type OAuthFlowErrorCode = keyof typeof OAUTH_FLOW_ERROR_STATUS

/** Codes of errors a store raises itself. */
export type StoreErrorCode =
  | 'store_full'
  /** A database store's table does not exist: `migrate()` was not run (with these names). */
  | 'store_not_migrated'
  /** A scan (`keys()`, `reencrypt()`) could not cover every record: run it again. */
  | 'scan_incomplete'
  /** A write a store makes for itself (a shared rate's row) did not land, tried again once. */
  | 'store_write_failed'
  | CredentialErrorCode

/**
 * Codes of a sealed credential that cannot be opened (`CredentialError`). None of them means
 * "no record" or "reauthorization required": the record is kept as it is, for you to fix.
 */
export type CredentialErrorCode =
  /** Sealed with a key id the cipher was not given (or the store was given no cipher). */
  | 'credential_key_unknown'
  /** Sealed for another store key: a record copied from another account. */
  | 'credential_mismatch'
  /** Its tag does not authenticate it: changed in place, or another key under the same id. */
  | 'credential_tampered'
  /** Not a whole envelope: a field missing, cut short, or not base64url. */
  | 'credential_malformed'
  /** Stored in plaintext, and the cipher's `plaintext` option is `'refuse'`. */
  | 'credential_plaintext'

export type SchedulingErrorCode =
  | WebhookErrorCode
  | ConfigErrorCode
  | ClientErrorCode
  | OAuthFlowErrorCode
  | StoreErrorCode
