import { createSchedulingClient } from '../api/client.js'
import { randomToken, timingSafeEqual, toBytes } from '../bytes.js'
import { type DedupeStore, MemoryDedupeStore } from '../dedupe.js'
import { ConfigError, isSchedulingError, OAuthFlowError, serverText } from '../errors.js'
import { getHeader, type HeadersInput } from '../headers.js'
import type { FetchLike } from '../http.js'
import type { AccountInfo, TokenRecord } from '../tokens/record.js'
import type { TokenStore } from '../tokens/store.js'
import { createOAuthClient, type OAuthClient } from './client.js'
import { parseCookies, readSignedCookie, serializeCookie, signCookie } from './cookies.js'
import { errorPage, wantsJson } from './page.js'
import { safeReturnTo } from './redirect.js'

export const STATE_COOKIE = 'scheduling_oauth_state'
export const CONNECTION_COOKIE = 'scheduling_connection'
const CONNECTION_MAX_AGE_S = 30 * 24 * 3600

export interface OAuthRoutesOptions<Req = unknown> {
  clientId: string
  clientSecret: string
  /** The redirect URI registered with the application: `<your origin><mount>/callback`. */
  redirectUri: string
  /** The authorization server's address (no default). */
  authUrl: string
  /** The API's address, for `GET /me` (with `/v1` when the service needs it). Default: `authUrl`. */
  apiUrl?: string
  /** Where the tokens go: your store. */
  tokenStore: TokenStore
  /** Signs the state and connection cookies: 32+ random characters, the same in every process. */
  cookieSecret?: string
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
  /** The key `/disconnect` deletes. Default: the account this browser connected (a signed cookie). */
  disconnectKey?: (request: Req) => string | undefined | Promise<string | undefined>
  /** Told of every error answer, for logging. */
  onError?: (error: OAuthFlowError, request: Req) => unknown
  /** Where to send the user after connecting or disconnecting, unless a safe `returnTo` was given. Default `/`. */
  successRedirect?: string
  /** How long a sign-in may take, in ms. Default 10 minutes. */
  stateTtlMs?: number
  /**
   * Makes each sign-in's state single-use: its nonce is claimed once, on the first callback
   * that presents it. Default: in this process's memory. Give a shared store (the same
   * `DedupeStore` as webhook dedupe, over Redis or PostgreSQL) when callbacks can reach
   * several instances.
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
  fetch?: FetchLike
  timeoutMs?: number
  /** Where the warning about a missing cookieSecret goes. Default `console`. */
  logger?: { warn(message: string): void }
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
}

export interface OAuthResponse {
  status: number
  headers: Record<string, string | string[]>
  body: string
}

export interface OAuthRoutes<Req = unknown> {
  /** Answers `GET /login`, `GET /callback` and `POST /disconnect`; `undefined` for any other path. */
  handle(request: OAuthRequest<Req>): Promise<OAuthResponse | undefined>
  /** The key of the account this browser connected, from its signed cookie. */
  connectedKey(headers: HeadersInput): Promise<string | undefined>
  /** The OAuth client the routes use. */
  readonly oauth: OAuthClient
}

let warnedAboutSecret = false

/**
 * The key of the account this browser connected, from the signed connection cookie the
 * callback set; `undefined` when there is none or its signature is wrong. For apps that reach
 * the request but not the routes (an encapsulated Fastify plugin, say).
 */
export async function readConnectedKey(
  headers: HeadersInput,
  cookieSecret: string,
): Promise<string | undefined> {
  const value = await readSignedCookie(
    CONNECTION_COOKIE,
    parseCookies(headers).get(CONNECTION_COOKIE),
    cookieSecret,
  )
  const k = (value as { k?: unknown } | undefined)?.k
  return typeof k === 'string' ? k : undefined
}

interface StateCookie {
  s: string
  r?: string
  e: number
}

function isStateCookie(value: unknown): value is StateCookie {
  const v = value as StateCookie
  return typeof v === 'object' && v !== null && typeof v.s === 'string' && typeof v.e === 'number'
}

function sameString(a: string, b: string): boolean {
  return timingSafeEqual(toBytes(a), toBytes(b))
}

/**
 * The OAuth 2 flow as three routes: `/login` (state in a signed, short-lived, HttpOnly cookie;
 * redirect to the consent page), `/callback` (state checked in constant time, code exchanged,
 * account identified, tokens stored, same-site redirect only) and `/disconnect`.
 */
export function createOAuthRoutes<Req = unknown>(
  options: OAuthRoutesOptions<Req>,
): OAuthRoutes<Req> {
  const oauth = createOAuthClient(options)
  const store = options.tokenStore
  if (
    typeof store?.get !== 'function' ||
    typeof store.set !== 'function' ||
    typeof store.delete !== 'function'
  ) {
    throw new ConfigError('schedulingOAuth: tokenStore must implement get, set and delete.')
  }
  let secret = options.cookieSecret
  if (secret === undefined || secret === '') {
    secret = randomToken(32)
    if (!warnedAboutSecret) {
      warnedAboutSecret = true
      ;(options.logger ?? console).warn(
        'schedulingOAuth: no cookieSecret was given, so a random one is used by this process. ' +
          'Sign-ins in progress fail after a restart or on another process: set cookieSecret ' +
          '(32+ random characters) in production.',
      )
    }
  } else if (secret.length < 16) {
    throw new ConfigError(
      'schedulingOAuth: cookieSecret must be at least 16 characters (32+ random ones are best).',
    )
  }
  const cookieSecret = secret
  const stateTtl = options.stateTtlMs ?? 10 * 60 * 1000
  const states = options.stateStore ?? new MemoryDedupeStore({ ttlMs: stateTtl, leaseMs: stateTtl })
  if (typeof states.claim !== 'function' || typeof states.complete !== 'function') {
    throw new ConfigError('schedulingOAuth: stateStore must implement claim, complete and release.')
  }
  const appOrigin = new URL(options.redirectUri).origin
  const secure = options.secureCookies ?? appOrigin.startsWith('https:')
  const origins = new Set([appOrigin])
  for (const origin of options.allowedOrigins ?? []) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        `schedulingOAuth: allowedOrigins must hold origins such as "https://app.example.com", got "${String(origin).slice(0, 100)}".`,
      )
    }
    origins.add(origin)
  }
  const successRedirect = options.successRedirect ?? '/'
  const identify =
    options.identify ??
    (async (accessToken: string) =>
      createSchedulingClient({
        baseUrl: options.apiUrl ?? options.authUrl,
        token: accessToken,
        fetch: options.fetch,
        timeoutMs: options.timeoutMs,
      }).me<AccountInfo>())

  function redirect(location: string, cookies: string[] = []): OAuthResponse {
    return {
      status: 302,
      headers: { location, 'cache-control': 'no-store', 'set-cookie': cookies },
      body: '',
    }
  }

  async function login(request: OAuthRequest<Req>, url: URL): Promise<OAuthResponse> {
    const state = randomToken(32)
    const value: StateCookie = { s: state, e: Date.now() + stateTtl }
    const returnTo = safeReturnTo(url.searchParams.get('returnTo'))
    if (returnTo !== undefined) value.r = returnTo
    const cookie = serializeCookie(
      STATE_COOKIE,
      await signCookie(STATE_COOKIE, value, cookieSecret),
      {
        path: request.mountPath || '/',
        maxAgeSeconds: Math.ceil(stateTtl / 1000),
        secure,
      },
    )
    return redirect(oauth.authorizeUrl({ state }), [cookie])
  }

  async function callback(request: OAuthRequest<Req>, url: URL): Promise<OAuthResponse> {
    const cookie = await readSignedCookie(
      STATE_COOKIE,
      parseCookies(request.headers).get(STATE_COOKIE),
      cookieSecret,
    )
    const serviceError = url.searchParams.get('error')
    if (serviceError !== null) {
      const description = url.searchParams.get('error_description')
      throw serviceError === 'access_denied'
        ? new OAuthFlowError(
            'access_denied',
            'The connection was declined on the consent page. Nothing was stored.',
          )
        : new OAuthFlowError(
            'authorization_failed',
            `The service refused the authorization (${serverText(serviceError, 64)}${description ? `: ${serverText(description)}` : ''}). Nothing was stored.`,
          )
    }
    if (!isStateCookie(cookie)) {
      throw new OAuthFlowError(
        parseCookies(request.headers).has(STATE_COOKIE) ? 'state_invalid' : 'state_missing',
        'The sign-in cookie is missing, expired or was not set by this app: start again from the login link.',
      )
    }
    if (cookie.e < Date.now()) {
      throw new OAuthFlowError(
        'state_invalid',
        'The sign-in took too long and expired: start again from the login link.',
      )
    }
    const state = url.searchParams.get('state')
    if (state === null || !sameString(state, cookie.s)) {
      throw new OAuthFlowError(
        'state_mismatch',
        'The state of this callback does not match the sign-in this browser started: nothing was stored.',
      )
    }
    const code = url.searchParams.get('code')
    if (code === null || code === '')
      throw new OAuthFlowError('code_missing', 'The callback has no authorization code.')
    // One sign-in, one callback: the state is used up here, whatever happens next.
    const claimKey = `oauth-state:${cookie.s}`
    if ((await states.claim(claimKey)) !== 'claimed') {
      throw new OAuthFlowError(
        'state_used',
        'This sign-in was already completed or is being completed: start again from the login link.',
      )
    }
    await states.complete(claimKey)

    let tokens: Awaited<ReturnType<OAuthClient['exchangeCode']>>
    try {
      tokens = await oauth.exchangeCode(code)
    } catch (cause) {
      throw new OAuthFlowError(
        'token_exchange_failed',
        `The authorization code could not be exchanged for tokens${isSchedulingError(cause) ? ` (${cause.code})` : ''}.`,
        { cause },
      )
    }
    let account: AccountInfo
    try {
      account = await identify(tokens.accessToken)
    } catch (cause) {
      throw new OAuthFlowError(
        'identify_failed',
        'The connected account could not be identified (GET /me failed).',
        {
          cause,
        },
      )
    }
    const id = account?.id
    const key = options.key
      ? await options.key(request.raw, account)
      : typeof id === 'string' || typeof id === 'number'
        ? String(id)
        : undefined
    if (typeof key !== 'string' || key === '') {
      throw new OAuthFlowError(
        'identify_failed',
        'GET /me gave no account id: pass a key(request, account) option.',
      )
    }
    const record: TokenRecord = { ...tokens, account }
    try {
      await store.set(key, record)
    } catch (cause) {
      throw new OAuthFlowError(
        'store_failed',
        'The tokens could not be saved in the token store.',
        { cause },
      )
    }
    await options.onConnected?.({ key, account, record, request: request.raw })
    const connection = serializeCookie(
      CONNECTION_COOKIE,
      await signCookie(CONNECTION_COOKIE, { k: key }, cookieSecret),
      {
        path: '/',
        maxAgeSeconds: CONNECTION_MAX_AGE_S,
        secure,
      },
    )
    return redirect(cookie.r ?? successRedirect, [clearState(request), connection])
  }

  const connectedKey = (headers: HeadersInput) => readConnectedKey(headers, cookieSecret)

  async function disconnect(request: OAuthRequest<Req>, url: URL): Promise<OAuthResponse> {
    // A state-changing request must show that it comes from this app: an Origin that is the
    // app's own (scheme, host and port), or without one, Sec-Fetch-Site: same-origin.
    const origin = getHeader(request.headers, 'origin')
    const sameOrigin =
      origin !== undefined
        ? origins.has(origin)
        : getHeader(request.headers, 'sec-fetch-site') === 'same-origin'
    if (!sameOrigin) {
      throw new OAuthFlowError(
        'cross_origin',
        'Disconnecting is only allowed from this site: the request must carry an Origin header with the origin of redirectUri (or one of allowedOrigins).',
      )
    }
    const key = options.disconnectKey
      ? await options.disconnectKey(request.raw)
      : await connectedKey(request.headers)
    if (key === undefined || key === '') {
      throw new OAuthFlowError('not_connected', 'There is no connected account to disconnect.')
    }
    try {
      await store.delete(key)
    } catch (cause) {
      throw new OAuthFlowError(
        'store_failed',
        'The tokens could not be deleted from the token store.',
        { cause },
      )
    }
    await options.onDisconnected?.({ key, request: request.raw })
    const clear = serializeCookie(CONNECTION_COOKIE, '', { path: '/', maxAgeSeconds: 0, secure })
    if (wantsJson(request.headers)) {
      return {
        status: 200,
        headers: { 'content-type': 'application/json; charset=utf-8', 'set-cookie': [clear] },
        body: JSON.stringify({ disconnected: true }),
      }
    }
    return {
      ...redirect(safeReturnTo(url.searchParams.get('returnTo')) ?? successRedirect, [clear]),
      status: 303,
    }
  }

  function clearState(request: OAuthRequest<Req>): string {
    return serializeCookie(STATE_COOKIE, '', {
      path: request.mountPath || '/',
      maxAgeSeconds: 0,
      secure,
    })
  }

  const routes: Record<
    string,
    [string, (request: OAuthRequest<Req>, url: URL) => Promise<OAuthResponse>]
  > = {
    '/login': ['GET', login],
    '/callback': ['GET', callback],
    '/disconnect': ['POST', disconnect],
  }

  return {
    oauth,
    connectedKey,
    async handle(request) {
      const url = new URL(request.path, 'http://routes.invalid')
      const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, '') : url.pathname
      const route = routes[path]
      if (route === undefined) return undefined
      const [method, run] = route
      try {
        // Exactly one method per route: HEAD is not GET here, as the callback has side effects.
        if (request.method.toUpperCase() !== method) {
          throw new OAuthFlowError('method_not_allowed', `${path} answers ${method} only.`)
        }
        return await run(request, url)
      } catch (caught) {
        const error =
          caught instanceof OAuthFlowError
            ? caught
            : new OAuthFlowError('store_failed', 'The connection could not be completed.', {
                cause: caught,
              })
        try {
          await options.onError?.(error, request.raw)
        } catch {
          // A failing listener must not change the answer.
        }
        const headers: Record<string, string | string[]> = { 'cache-control': 'no-store' }
        // A failed callback uses up the sign-in: its state cookie goes.
        if (path === '/callback') headers['set-cookie'] = [clearState(request)]
        if (error.code === 'method_not_allowed') headers.allow = method
        if (wantsJson(request.headers)) {
          headers['content-type'] = 'application/json; charset=utf-8'
          return { status: error.status, headers, body: JSON.stringify(error.toJSON()) }
        }
        headers['content-type'] = 'text/html; charset=utf-8'
        const retry =
          error.code === 'cross_origin' || error.code === 'not_connected'
            ? undefined
            : `${request.mountPath}/login`
        return {
          status: error.status,
          headers,
          body: errorPage('Connecting your scheduling account failed', error.message, retry),
        }
      }
    },
  }
}
