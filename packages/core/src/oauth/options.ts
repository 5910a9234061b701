import type { DedupeStore } from '../claims/dedupe.js'
import type { OAuthFlowError } from '../errors/connection.js'
import type { FetchLike } from '../http/fetch.js'
import type { HeadersInput } from '../http/headers.js'
import type { Logger } from '../log.js'
import type { WebhookSubscriptions } from '../subscriptions/options.js'
import type { ConnectionChange } from '../tokens/connection.js'
import type { AccountInfo, TokenRecord } from '../tokens/record.js'
import type { TokenStore } from '../tokens/store.js'

export interface OAuthRoutesOptions<Req = unknown> {
  clientId: string
  clientSecret: string
  /** The redirect URI registered with the application: `<your origin><mount>/callback`. */
  redirectUri: string
  /** The authorization server's address (no default). */
  authUrl: string
  /**
   * The authorization server's issuer identifier, compared with the `iss` a callback carries
   * (RFC 9207, against mix-up attacks); a callback without `iss` is not checked. Default:
   * `authUrl`, with or without a trailing `/`. Set it when the server's issuer differs (its
   * metadata's `issuer`).
   */
  issuer?: string
  /** The scope to ask for, space-separated or a list. Default: none is sent (see `createOAuthClient`). */
  scope?: string | readonly string[]
  /** The API's address, for `GET /me` (with `/v1` when the service needs it). Default: `authUrl`. */
  apiUrl?: string
  /** Where the tokens go: your store. */
  tokenStore: TokenStore
  /**
   * Signs the state and connection cookies: 32+ random characters, the same in every process.
   * To rotate it, give a list, newest first: cookies are signed with the first and accepted
   * with any; drop an old secret once its cookies have expired (the connection cookie lives
   * 30 days by default).
   */
  cookieSecret?: string | readonly string[]
  /** The store key for a connected account. Default: the account's `id` from `GET /me`. */
  key?: (request: Req, account: AccountInfo) => string | Promise<string>
  /** Identifies the account from its new access token. Default: `GET {apiUrl}/me`. */
  identify?: (accessToken: string) => Promise<AccountInfo>
  /** Called once the tokens are stored. */
  onConnected?: (connection: {
    key: string
    account: AccountInfo
    record: TokenRecord
    request: Req
  }) => unknown
  /** Called once the tokens are deleted. */
  onDisconnected?: (connection: { key: string; request: Req }) => unknown
  /**
   * Told of every change the routes make to a key's connection: `connected`, `reconnected`
   * (to another service account than before), `disconnected`. A failing listener changes
   * nothing (it is not awaited).
   */
  onConnectionChange?: (change: ConnectionChange) => void
  /**
   * Connected accounts' webhooks (`createWebhookSubscriptions`): connecting ensures the
   * account's webhook, and `/disconnect` removes it while the account's token still works,
   * before the tokens are deleted. When the webhook cannot be made, the account is connected
   * all the same, the page and the log say so, and `reconcile` makes it later.
   */
  subscriptions?: Pick<WebhookSubscriptions, 'ensure' | 'remove'> &
    Partial<Pick<WebhookSubscriptions, 'url' | 'apiUrl' | 'replaceConnection'>>
  /** The key `/disconnect` deletes. Default: the account this browser connected (a signed cookie). */
  disconnectKey?: (request: Req) => string | undefined | Promise<string | undefined>
  /** Told of every error answer, for logging. */
  onError?: (error: OAuthFlowError, request: Req) => unknown
  /** Where to send the user after connecting or disconnecting, unless a safe `returnTo` was given. Default `/`. */
  successRedirect?: string
  /** How long a sign-in may take, in ms. Default 10 minutes. */
  stateTtlMs?: number
  /**
   * PKCE (RFC 7636, S256) on every sign-in: the verifier stays in this browser's signed sign-in
   * cookie and goes with the code exchange, so a leaked code cannot be redeemed through
   * another browser's sign-in (RFC 9700 section 2.1.1). Default `true`; set `false` only for
   * an authorization server that refuses the `code_challenge` parameters.
   */
  pkce?: boolean
  /**
   * Makes each sign-in's state single-use: its nonce is claimed once, on the first callback
   * that presents it. Default: in this process's memory, holding up to 70 000 states for
   * `stateTtlMs`; it never forgets a used state before then, and refuses callbacks
   * (`state_store_failed`) while full instead. Give a shared store (the same `DedupeStore` as
   * webhook dedupe, over Redis or PostgreSQL) when callbacks can reach several instances.
   */
  stateStore?: DedupeStore
  /**
   * Whether cookies get `Secure`. Default: when `redirectUri` is `https:`, which is what the
   * browser sees even when a TLS proxy forwards plain HTTP to the app. The same on every adapter,
   * whatever the framework's trust-proxy setting.
   */
  secureCookies?: boolean
  /**
   * Origins allowed to `POST /disconnect`, besides the origin of `redirectUri`: a request must
   * show one of them in `Origin` (or, without `Origin`, be `Sec-Fetch-Site: same-origin`).
   */
  allowedOrigins?: string[]
  /** A `fetch` to use instead of the global one (token requests and `GET /me`). */
  fetch?: FetchLike
  /** Time-out of one token request or `GET /me`, in ms. Default 10 000 (token) and 30 000 (`/me`). */
  timeoutMs?: number
  /**
   * Where failures are told, with their cause (`invalid_client`, `invalid_grant`, the `/me`
   * status and address), and the warning about a missing `cookieSecret`. Default: the
   * framework's logger where it has one (Fastify's `request.log`), else `console`.
   */
  logger?: Logger
  /**
   * Whether error pages name the cause (the OAuth error, the `/me` status and address, a host
   * mismatch) to whoever completes a sign-in. Default: only when `NODE_ENV` is `development`
   * or `test`; unset, or any other value, counts as production, as does a runtime where
   * `process.env` is missing or cannot be read (workerd, Deno without `--allow-env`). The log
   * always names the cause.
   */
  showCauses?: boolean
}

/** A request to the OAuth routes in plain data, as an adapter gives it. */
export interface OAuthRequest<Req = unknown> {
  method: string
  /** Path relative to where the routes are mounted, with its query: `/login?returnTo=%2F`. */
  path: string
  headers: HeadersInput
  /** Where the routes are mounted, e.g. `/auth/scheduling` (`''` at the root). */
  mountPath: string
  /** The framework's own request, handed to `key`, `disconnectKey` and the hooks. */
  raw: Req
  /** The framework's logger (Fastify's `request.log`), used when no `logger` option is given. */
  logger?: Logger
  /**
   * Whether the request reached the app over HTTPS as the framework sees it (Express
   * `req.secure` and Koa `ctx.secure` honour their proxy settings, Fastify `request.protocol`
   * its `trustProxy`). Used only to warn when `redirectUri` is `http:` on an HTTPS site.
   */
  secure?: boolean
}

export interface OAuthResponse {
  status: number
  headers: Record<string, string | string[]>
  body: string
}
