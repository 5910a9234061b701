// The fake service's types, at the package root: @scheduling-kit/testing inlines them into its own
// declarations through the `types` subpath (its bundler resolves a file there, not a relative
// import).
import type { IncomingMessage, ServerResponse } from 'node:http'

export interface AuthServiceOptions {
  clientId?: string
  clientSecret?: string
  /** Redirect URIs registered for the client; more with `allowRedirectUri`. */
  redirectUris?: string[]
  /** `expires_in` of new access tokens, in seconds. Default 7200. */
  expiresIn?: number
  /** Leave refresh_token out of refresh answers. */
  omitRefreshTokenOnRefresh?: boolean
  /** How `/oauth/authorize` answers: a consent page, or approve / deny at once. Default `approve`. */
  authorize?: AuthorizeMode
  /** The application's name on the consent page. */
  appName?: string
  /**
   * Whether presenting a spent refresh token revokes its whole family (OAuth 2.1 advice).
   * Default true. Either way a spent refresh token is refused with `invalid_grant`.
   */
  reuseRevokesFamily?: boolean
  /**
   * A reuse grace period, in ms, as many real servers offer (Okta, Auth0's reuse interval): a
   * spent refresh token presented again within this time of its first use is answered with new
   * tokens of the same family, not refused. Counted in `counters.graceReuse`. Default 0: strict
   * rotation, a spent token is refused at once.
   */
  reuseGraceMs?: number
  /**
   * PKCE (RFC 7636): every authorization request must carry an S256 `code_challenge`, and its
   * code is exchanged only with the matching `code_verifier`. Default true.
   */
  requirePkce?: boolean
}

export type AuthorizeMode = 'consent' | 'approve' | 'deny'

/** A failure to answer with: a status, a malformed page, no answer, or an answer of your own. */
export type AuthFailure =
  | 500
  | 503
  | 'malformed'
  | 'hang'
  | { status: number; body: unknown; headers?: Record<string, string> }

export interface TokenRequest {
  headers: IncomingMessage['headers']
  form: Record<string, string>
  /** When it came, ms since the epoch. */
  at: number
}

/** A webhook of the fake service, as it keeps it (the API shows it without `account` and `events`). */
export interface FakeWebhook {
  id: string
  url: string
  secret: string
  state: 'active' | 'disabled' | 'deleted'
  /** The account whose events it receives; `undefined` for an app-wide webhook made by the control API. */
  account: string | undefined
  /** Event types it receives; all when empty. */
  events: string[]
  version: string
  created_at: string
  /** Failed deliveries in a row (a success resets it). */
  failures: number
}

/** Answers the next API requests with a failure instead (see `failApi`). */
export interface ApiFailure {
  /** The status answered: 429, 500, 502, 503, ... */
  status: number
  /** How many requests in a row. Default 1; 0 clears the failures still queued. */
  count?: number
  /** A `Retry-After` header (seconds, or an HTTP date); none when absent. */
  retryAfter?: string
  /** Only requests of this method. Default any. */
  method?: string
  /**
   * The request is carried out before the failure is answered (a create that landed, a delete
   * that happened), as when a gateway loses the answer. Default false.
   */
  landed?: boolean
  /** Hold the answer this long first, in ms (a client's time-out). */
  delayMs?: number
}

/** What the API has answered, by status, and how many requests of each kind it took. */
export interface ApiCounters {
  requests: number
  byStatus: Record<number, number>
  created: number
  deleted: number
  listed: number
  /**
   * Webhook records read to answer the API's lists: one account's at a time (its index), so
   * this grows with what the accounts listed hold, never with how many accounts there are.
   */
  examined: number
}

/** The accounts' webhooks and the webhook API's switches, as the fake service exposes them. */
export interface WebhookApi {
  readonly counters: ApiCounters
  /** Successful webhook lists answered, by the account that asked. */
  readonly listsByAccount: ReadonlyMap<string | undefined, number>
  /** Makes a webhook (the API's create, or the control API's with an id or secret of its own). */
  create(input: {
    url: string
    account?: string
    secret?: string
    id?: string
    events?: string[]
  }): FakeWebhook
  get(id: string): FakeWebhook | undefined
  /** Every webhook, oldest first; of one account when given (`null`: the app-wide ones). */
  all(account?: string | null): FakeWebhook[]
  /** Removes a webhook as the API's delete does. */
  remove(id: string): FakeWebhook | undefined
  /** Sets a webhook's state, as the service does on its own (`disabled` after failures, say). */
  setState(id: string, state: FakeWebhook['state']): boolean
  /**
   * The next API requests (of `method`, when given) fail this way; `count: 0` clears the ones
   * still queued (of `method`, when given).
   */
  failApi(failure: ApiFailure): void
  /** How many injected failures are still queued. */
  readonly pendingFailures: number
  /** Answers `/v1/webhooks` and `/v1/webhooks/{id}`; `false` for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
}

/** How many requests of each kind the server has answered. */
export interface AuthCounters {
  authorize: number
  exchange: number
  refresh: number
  refreshOk: number
  reuse: number
  /** Spent refresh tokens answered with new tokens inside `reuseGraceMs`. */
  graceReuse: number
  revoked: number
  me: number
  /** Code exchanges refused for a missing or wrong PKCE verifier. */
  pkceRefused: number
  /** Codes presented again after they were exchanged: each revoked the grant issued from it. */
  codeReuse: number
}

/** A token endpoint answer (section 2.3 of the spec). */
export interface TokenResponseBody {
  access_token: string
  refresh_token: string
  expires_in: number
  token_type: string
}

/** The fake authorization server: its endpoints, counters and controls for tests. */
export interface AuthService {
  readonly clientId: string
  readonly clientSecret: string
  readonly counters: AuthCounters
  /** Every token request received, oldest first. */
  readonly tokenRequests: TokenRequest[]
  /** The account an `Authorization: Bearer` value belongs to, if it is valid now. */
  accountOf(authorization: string | undefined): string | undefined
  /** Answers the service's OAuth, `/me` and `/v1/webhooks` paths; `false` for any other. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
  /** The accounts' webhooks and the webhook API's switches (`failApi`) and counters. */
  readonly webhooks: WebhookApi
  /**
   * A code, as if the user approved on the consent page. With `codeChallenge` (S256), its
   * exchange needs the matching verifier; without, the exchange checks none (a test's stand-in
   * for a sign-in whose verifier it does not know).
   */
  issueCode(account?: string, forRedirect?: string, codeChallenge?: string): string
  /** Tokens for an account, as if a code had been exchanged. */
  grant(account?: string): TokenResponseBody
  /** Accepts one more redirect URI at the consent page and the token endpoint. */
  allowRedirectUri(uri: string): void
  /** How the consent page answers, and for which account it approves. */
  setAuthorize(mode: AuthorizeMode, account?: string): void
  /** A personal access token for an account. */
  addPersonalAccessToken(value: string, account: string): void
  /** The next token requests fail this way, in order. */
  failNext(...modes: AuthFailure[]): void
  /** Clears the token endpoint's queued failures (`failNext`) and the API's (`failApi`). */
  clearFailures(): void
  /**
   * An outage of the token endpoint: every token request answers `failure` until called with
   * `undefined` (queued `failNext` failures come first).
   */
  setDown(failure: AuthFailure | undefined): void
  /**
   * Delays token answers: every request before it is looked at (`every`, the default), or
   * only successful refreshes after the refresh token is spent (`success`).
   */
  setLatency(ms: number, on?: 'every' | 'success'): void
  setExpiresIn(seconds: number): void
  /** Makes one access token, or every access token of an account, expire now. */
  expireAccessToken(tokenOrAccount: string): void
  /** Revokes every grant of an account: its refresh and access tokens stop working. */
  revokeGrant(account: string): void
  isRevoked(refreshToken: string): boolean
  /** Whether a refresh token would be accepted now: known, unspent, its family not revoked. */
  isRefreshTokenValid(refreshToken: string): boolean
  /** Ends answers held by `failNext('hang')`. */
  releaseHanging(): void
  /** Every account that was granted tokens: its grants, revoked or not, and live access tokens. */
  accounts(): AccountGrants[]
}

/** What the dashboard shows of an account's grants. */
export interface AccountGrants {
  account: string
  grants: number
  revoked: number
  /** Access tokens not expired and not revoked. */
  liveAccessTokens: number
}
