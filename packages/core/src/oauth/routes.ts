import { deferredPart } from '../deferred.js'
import { OAuthFlowError } from '../errors/connection.js'
import type { HeadersInput } from '../http/headers.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import { normalMount, redirectMount, underMount } from '../kit/mount.js'
import { consoleLogger, type Logger } from '../log.js'
import { callback } from './callback.js'
import type { OAuthClient } from './client.js'
import { readConnectedKey } from './connection.js'
import { disconnect } from './disconnect.js'
import { privateHeaders, redirect } from './flow.js'
import { explainCause, missingCookieHint, OAuthLog } from './log.js'
import type { OAuthRequest, OAuthResponse, OAuthRoutesOptions } from './options.js'
import { errorPage, wantsJson } from './page.js'
import { safeReturnTo } from './redirect.js'
import type { RouteSettings } from './settings.js'
import { resolveRouteSettings } from './settings.js'
import { clearStateCookie, startSignIn } from './state.js'

export interface OAuthRoutes<Req = unknown> {
  /** Answers `GET /login`, `GET /callback` and `POST /disconnect`; `undefined` for any other path. */
  handle(request: OAuthRequest<Req>): Promise<OAuthResponse | undefined>
  /**
   * Serves a Fetch `Request` (Next.js route handlers, Hono, Bun, Deno, Workers); 404 off its
   * routes. The routes live under `mountPath`, by default the redirect URI's path without its
   * last segment (`/auth/scheduling` for `…/auth/scheduling/callback`). `key`, `disconnectKey`
   * and the hooks get the `Request` as their request.
   */
  fetch(request: Request, options?: { mountPath?: string }): Promise<Response>
  /** The key of the account this browser connected, from its signed cookie. */
  connectedKey(headers: HeadersInput): Promise<string | undefined>
  /** The OAuth client the routes use. */
  readonly oauth: OAuthClient
}

/** The settings, with the routes' log (its summaries are per set of routes). */
type Routed<Req> = RouteSettings<Req> & { log: OAuthLog }

type Route<Req> = (
  request: OAuthRequest<Req>,
  url: URL,
  settings: Routed<Req>,
) => Promise<OAuthResponse>

function loggerFor(request: OAuthRequest<unknown>, settings: RouteSettings<unknown>): Logger {
  return settings.logger ?? request.logger ?? consoleLogger
}

/** `GET /login`: a new sign-in, remembered in a signed cookie, then off to the consent page. */
async function login<Req>(
  request: OAuthRequest<Req>,
  url: URL,
  settings: Routed<Req>,
): Promise<OAuthResponse> {
  const logger = loggerFor(request, settings as RouteSettings<unknown>)
  settings.log.loginHost(logger, request.headers, settings.options.redirectUri)
  settings.log.loginScheme(logger, request, settings as RouteSettings<unknown>)
  const returnTo = safeReturnTo(url.searchParams.get('returnTo'))
  const { state, codeChallenge, cookie } = await startSignIn(
    returnTo,
    settings as RouteSettings<unknown>,
  )
  return redirect(settings.oauth.authorizeUrl({ state, codeChallenge }), [cookie])
}

/** Each path, the one method it answers (HEAD is not GET here: the callback has effects) and its route. */
const ROUTES: Record<string, [method: string, route: Route<never>]> = {
  '/login': ['GET', login],
  '/callback': ['GET', callback],
  '/disconnect': ['POST', disconnect],
}

/** What the developer should know beyond the message: the cause, or why a cookie is missing. */
function hintFor(
  error: OAuthFlowError,
  request: OAuthRequest<unknown>,
  settings: RouteSettings<unknown>,
): string | undefined {
  if (error.code === 'state_missing') {
    return missingCookieHint(request.headers, settings.options.redirectUri)
  }
  if (error.code === 'access_denied' && settings.options.scope === undefined) {
    return 'If the account owner allowed access, the authorization server may require a scope (RFC 6749 section 3.3): set the scope option to what the application is registered for.'
  }
  return explainCause(error)
}

/** The answer to a failed route: an HTML page, or JSON when the client asks for it. */
function failure(
  error: OAuthFlowError,
  request: OAuthRequest<unknown>,
  path: string,
  settings: RouteSettings<unknown>,
  hint: string | undefined,
): OAuthResponse {
  // Outside production the page (or JSON) names the cause; in production only the log does.
  const shown = settings.showCauses ? hint : undefined
  const headers = privateHeaders()
  // A failed callback uses up the sign-in: its state cookie goes.
  if (path === '/callback')
    headers['set-cookie'] = [clearStateCookie(settings.options.redirectUri, settings.secure)]
  if (error.code === 'route_method_not_allowed') headers.allow = ROUTES[path]![0]
  if (wantsJson(request.headers)) {
    headers['content-type'] = 'application/json; charset=utf-8'
    const body = error.toJSON() as { error: { code: string; message: string; cause?: string } }
    if (shown !== undefined) body.error.cause = shown
    return { status: error.status, headers, body: JSON.stringify(body) }
  }
  headers['content-type'] = 'text/html; charset=utf-8'
  const retry =
    error.code === 'cross_origin' || error.code === 'nothing_to_disconnect'
      ? undefined
      : `${request.mountPath}/login`
  return {
    status: error.status,
    headers,
    body: errorPage('Connecting your scheduling account failed', error.message, retry, shown),
  }
}

async function answer<Req>(
  request: OAuthRequest<Req>,
  settings: Routed<Req>,
): Promise<OAuthResponse | undefined> {
  const url = new URL(request.path, 'http://routes.invalid')
  const path = url.pathname.length > 1 ? withoutTrailingSlashes(url.pathname) : url.pathname
  const found = ROUTES[path]
  if (found === undefined) return undefined
  const [method, route] = found
  try {
    if (request.method.toUpperCase() !== method) {
      throw new OAuthFlowError('route_method_not_allowed', `${path} answers ${method} only.`)
    }
    return await (route as unknown as Route<Req>)(request, url, settings)
  } catch (caught) {
    const error =
      caught instanceof OAuthFlowError
        ? caught
        : new OAuthFlowError('flow_failed', 'The connection could not be completed.', {
            cause: caught,
          })
    const hint = hintFor(error, request, settings as RouteSettings<unknown>)
    settings.log.report(loggerFor(request, settings as RouteSettings<unknown>), error, path, hint)
    try {
      await settings.options.onError?.(error, request.raw)
    } catch {
      // A failing listener must not change the answer.
    }
    return failure(error, request, path, settings as RouteSettings<unknown>, hint)
  }
}

/**
 * The OAuth 2 flow as three routes: `/login` (state in a signed, short-lived, HttpOnly cookie;
 * redirect to the consent page), `/callback` (state checked in constant time, code exchanged,
 * account identified, tokens stored, same-site redirect only) and `/disconnect`.
 *
 * @example
 * ```ts
 * const routes = createOAuthRoutes({
 *   clientId, clientSecret, authUrl: 'https://auth.example.com',
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback',
 *   tokenStore, cookieSecret: process.env.COOKIE_SECRET,
 * })
 * const answer = await routes.handle({
 *   method: 'GET', path: '/login?returnTo=%2Fsettings', headers, mountPath: '/auth/scheduling', raw: request,
 * })
 * ```
 */
export function createOAuthRoutes<Req = unknown>(
  options: OAuthRoutesOptions<Req>,
): OAuthRoutes<Req> {
  // `createScheduling(() => options)`: built at the first request, not at import.
  const wait = deferredPart<OAuthRoutesOptions<Req>, OAuthRoutes<Req>>(options, 'oauth')
  if (wait !== undefined) return wait((built) => createOAuthRoutes(built))
  const settings: Routed<Req> = { ...resolveRouteSettings(options), log: new OAuthLog() }
  const defaultMount = redirectMount(options.redirectUri)
  const handle = (request: OAuthRequest<Req>) => answer(request, settings)
  return {
    oauth: settings.oauth,
    connectedKey: (headers) =>
      readConnectedKey(headers, settings.cookieSecrets, {
        secure: settings.secure,
        tokenStore: settings.store,
      }),
    handle,
    fetch: async (request, fetchOptions) => {
      const url = new URL(request.url)
      const mountPath = normalMount(fetchOptions?.mountPath ?? defaultMount)
      const path = underMount(url.pathname + url.search, mountPath)
      const answered =
        path !== undefined
          ? await handle({
              method: request.method,
              path,
              headers: request.headers,
              mountPath,
              raw: request as unknown as Req,
              secure: url.protocol === 'https:',
            })
          : undefined
      if (answered === undefined) return new Response('Not found', { status: 404 })
      const headers = new Headers()
      for (const [name, value] of Object.entries(answered.headers)) {
        for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
      }
      return new Response(answered.body === '' ? null : answered.body, {
        status: answered.status,
        headers,
      })
    },
  }
}
