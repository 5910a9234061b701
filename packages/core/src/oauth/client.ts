import { ConfigError } from '../errors/errors.js'
import { type FetchLike, send } from '../http/fetch.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import type { TokenSet } from '../tokens/record.js'
import { readTokenResponse } from './token-response.js'

export interface OAuthClientOptions {
  clientId: string
  clientSecret: string
  /** The redirect URI registered with the application. */
  redirectUri: string
  /** The authorization server's address, e.g. `https://auth.example.com` (no default). */
  authUrl: string
  /** A `fetch` to use instead of the global one. */
  fetch?: FetchLike
  /**
   * The scope to ask for: space-separated (`'read write'`) or a list (`['read', 'write']`).
   * Sent as `scope` on the authorization request only; omitted, the request has no `scope`,
   * as the service's own authorization server expects. A standard server may need one
   * (RFC 6749 section 3.3): without it, it can answer `access_denied` however the user chose.
   */
  scope?: string | readonly string[]
  /** Time-out of one token request, in ms. Default 10 000. */
  timeoutMs?: number
  /** Clock for `expiresAt`, for tests. */
  now?: () => number
}

export interface OAuthClient {
  /**
   * `{authUrl}/oauth/authorize?response_type=code&client_id=…&redirect_uri=…&state=…`, then
   * `&scope=…` when a scope is set, and `&code_challenge=…&code_challenge_method=S256` when a
   * PKCE challenge is given (RFC 7636).
   */
  authorizeUrl(params: { state: string; codeChallenge?: string }): string
  /**
   * Exchanges an authorization code for tokens (section 4), with the PKCE `code_verifier` of
   * the sign-in that asked for it when it sent a challenge.
   */
  exchangeCode(code: string, options?: { codeVerifier?: string }): Promise<TokenSet>
  /**
   * Gets new tokens with a refresh token; keeps it when the answer has no new one. `timeoutMs`
   * replaces the client's for this request (the token manager waits as long as its lease).
   */
  refresh(refreshToken: string, options?: { timeoutMs?: number }): Promise<TokenSet>
  /** Time-out of one token request, in ms (the `timeoutMs` option). */
  readonly timeoutMs: number
}

const MAX_TOKEN_RESPONSE = 64 * 1024

/** How far behind this process's clock the server's `Date` may be and still be believed. */
const MAX_SERVER_LAG_MS = 10 * 60_000

/**
 * When the tokens were issued, on the clock that judges them: the authorization server's
 * `Date` when it is behind this process's clock by less than ten minutes (this process's clock
 * runs ahead), else this process's. Every instance reads the times one instance wrote: a clock
 * running ahead in one of them must not make the others hold a token past its real expiry.
 * `Date` counts whole seconds, so it errs early, the safe side.
 */
export function receiptTime(local: number, date: string | null): number {
  if (date === null) return local
  const server = Date.parse(date)
  if (!Number.isFinite(server) || server >= local || local - server > MAX_SERVER_LAG_MS)
    return local
  return server
}

/** RFC 7636 section 4.1: a code verifier (and an S256 challenge, 43 of them) is 43 to 128 of these. */
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/

/** RFC 6749 section 3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/

/**
 * The `scope` option as the request sends it: its tokens, each checked, once each, in order,
 * joined by single spaces. `undefined` when no scope is set.
 */
function scopeOf(scope: OAuthClientOptions['scope'], who: string): string | undefined {
  if (scope === undefined) return undefined
  const fix = `${who}: scope must be scope tokens (printable ASCII, no space, " or \\), as a space-separated string or a list, e.g. ['read', 'write'].`
  let tokens: readonly unknown[]
  if (typeof scope === 'string') tokens = scope.split(' ').filter((token) => token !== '')
  else if (Array.isArray(scope)) tokens = scope
  else throw new ConfigError(fix)
  if (tokens.length === 0) {
    throw new ConfigError(`${who}: scope is empty; leave the option out to send no scope.`)
  }
  for (const token of tokens) {
    if (typeof token !== 'string' || !SCOPE_TOKEN.test(token)) {
      throw new ConfigError(`${fix} Got ${JSON.stringify(String(token).slice(0, 40))}.`)
    }
  }
  return [...new Set(tokens as string[])].join(' ')
}

function requireString(options: OAuthClientOptions, name: keyof OAuthClientOptions): string {
  const value = options[name]
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(
      `createOAuthClient: ${name} is required (from your OAuth application's settings).`,
    )
  }
  return value
}

/**
 * A fetch-based OAuth 2 client for the service's authorization server.
 *
 * @example
 * ```ts
 * const oauth = createOAuthClient({
 *   clientId, clientSecret, authUrl: 'https://auth.example.com',
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback',
 * })
 * const tokens = await oauth.exchangeCode(code)
 * ```
 */
export function createOAuthClient(options: OAuthClientOptions): OAuthClient {
  return new Client(options)
}

/** The OAuth client: the authorize URL, the code exchange and the refresh, on one token URL. */
class Client implements OAuthClient {
  readonly timeoutMs: number
  readonly #clientId: string
  readonly #clientSecret: string
  readonly #redirectUri: string
  readonly #authUrl: string
  readonly #tokenUrl: string
  readonly #scope: string | undefined
  readonly #fetch: FetchLike
  readonly #now: () => number

  constructor(options: OAuthClientOptions) {
    this.#clientId = requireString(options, 'clientId')
    this.#clientSecret = requireString(options, 'clientSecret')
    this.#redirectUri = requireString(options, 'redirectUri')
    this.#authUrl = withoutTrailingSlashes(requireString(options, 'authUrl'))
    for (const [name, value] of [
      ['authUrl', this.#authUrl],
      ['redirectUri', this.#redirectUri],
    ] as const) {
      if (!URL.canParse(value))
        throw new ConfigError(`createOAuthClient: ${name} must be an absolute URL.`)
    }
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.timeoutMs = options.timeoutMs ?? 10_000
    this.#now = options.now ?? Date.now
    this.#tokenUrl = `${this.#authUrl}/oauth/token`
    this.#scope = scopeOf(options.scope, 'createOAuthClient')
  }

  authorizeUrl({ state, codeChallenge }: { state: string; codeChallenge?: string }): string {
    if (typeof state !== 'string' || state === '') {
      throw new ConfigError('authorizeUrl: a non-empty state is required (CSRF protection).')
    }
    if (codeChallenge !== undefined && !PKCE_VALUE.test(codeChallenge)) {
      throw new ConfigError(
        'authorizeUrl: codeChallenge must be the base64url SHA-256 of the code verifier (43 characters, RFC 7636 S256).',
      )
    }
    const url = new URL(`${this.#authUrl}/oauth/authorize`)
    url.searchParams.set('response_type', 'code')
    url.searchParams.set('client_id', this.#clientId)
    url.searchParams.set('redirect_uri', this.#redirectUri)
    url.searchParams.set('state', state)
    if (this.#scope !== undefined) url.searchParams.set('scope', this.#scope)
    if (codeChallenge !== undefined) {
      url.searchParams.set('code_challenge', codeChallenge)
      url.searchParams.set('code_challenge_method', 'S256')
    }
    return url.toString()
  }

  async exchangeCode(code: string, exchange?: { codeVerifier?: string }): Promise<TokenSet> {
    const fields: Record<string, string> = {
      code,
      client_id: this.#clientId,
      client_secret: this.#clientSecret,
      grant_type: 'authorization_code',
      redirect_uri: this.#redirectUri,
    }
    const verifier = exchange?.codeVerifier
    if (verifier !== undefined) {
      if (!PKCE_VALUE.test(verifier)) {
        throw new ConfigError(
          'exchangeCode: codeVerifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" or "~" (RFC 7636).',
        )
      }
      fields.code_verifier = verifier
    }
    return this.#tokenRequest(fields, 'Authorization code exchange')
  }

  async refresh(refreshToken: string, request?: { timeoutMs?: number }): Promise<TokenSet> {
    const wait = request?.timeoutMs
    if (wait !== undefined && !(Number.isFinite(wait) && wait > 0)) {
      throw new ConfigError('refresh: timeoutMs must be a number of milliseconds > 0.')
    }
    const fields = {
      refresh_token: refreshToken,
      grant_type: 'refresh_token',
      client_id: this.#clientId,
      client_secret: this.#clientSecret,
    }
    return this.#tokenRequest(fields, 'Token refresh', refreshToken, wait)
  }

  async #tokenRequest(
    fields: Record<string, string>,
    what: string,
    previous?: string,
    wait = this.timeoutMs,
  ): Promise<TokenSet> {
    const answer = await send(
      this.#tokenUrl,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: new URLSearchParams(fields).toString(),
      },
      { fetch: this.#fetch, timeoutMs: wait, what, maxBodyBytes: MAX_TOKEN_RESPONSE },
    )
    const received = receiptTime(this.#now(), answer.headers.get('date'))
    // Every credential of the request: none may come back in an error's text.
    const sent = [fields.client_secret, fields.refresh_token, fields.code, fields.code_verifier]
    return readTokenResponse(
      answer,
      received,
      what,
      previous,
      sent.filter((v): v is string => v !== undefined),
    )
  }
}
