import type { OAuthFlowErrorCode } from '../errors/codes.js'
import type { OAuthFlowError } from '../errors/connection.js'
import { isSchedulingError, serverText } from '../errors/errors.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import { describeError, emit, type Logger, Summarizer } from '../log.js'
import type { OAuthRequest } from './options.js'
import type { RouteSettings } from './settings.js'

/**
 * Failures past the state check (or in the app's own hooks and stores): a sender cannot make
 * them without a sign-in of its own, so each is told, at `error`, with its cause.
 */
const EACH: ReadonlySet<OAuthFlowErrorCode> = new Set<OAuthFlowErrorCode>([
  'issuer_mismatch',
  'token_exchange_failed',
  'identify_failed',
  'store_failed',
  'key_failed',
  'connected_hook_failed',
  'disconnect_key_failed',
  'disconnected_hook_failed',
  'state_store_failed',
  'flow_failed',
])

/** The OAuth 2 error code a token endpoint answered, from anywhere in the cause chain. */
function oauthErrorOf(
  error: unknown,
): { status: number; error?: string; errorDescription?: string } | undefined {
  let current = error
  for (let depth = 0; depth < 4 && isSchedulingError(current); depth++) {
    if (current.code === 'oauth_error') return current as never
    current = current.cause
  }
  return undefined
}

/**
 * What the developer should check, in words, for a failure whose cause says more than the
 * page's message: the token endpoint's OAuth error, the `/me` status and address, a network
 * failure's address. Never a secret: OAuth error codes, statuses and addresses only.
 */
export function explainCause(error: OAuthFlowError): string | undefined {
  const cause = error.cause
  const refused = oauthErrorOf(cause)
  if (refused !== undefined) {
    const said = `the authorization server answered ${refused.status}${refused.error ? ` ${refused.error}` : ''}`
    if (refused.error === 'invalid_client') {
      return `${said}: it does not accept the client credentials. Check clientId and clientSecret against the OAuth application's settings.`
    }
    if (refused.error === 'invalid_grant') {
      return `${said}: the code was already used or has expired, or redirectUri is not exactly the redirect URI registered and used for this sign-in.`
    }
    return `${said}${refused.errorDescription ? ` (${refused.errorDescription})` : ''}.`
  }
  if (isSchedulingError(cause)) {
    if (error.code === 'identify_failed' && cause.code === 'api_error') {
      return `${cause.message} Check apiUrl (with the /v1 prefix when the service needs it), or pass an identify option.`
    }
    return cause.message
  }
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`
  return undefined
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/

function isLoopback(hostname: string): boolean {
  return LOOPBACK.test(hostname)
}

/**
 * The host a request was sent to, from its `Host` header: made safe for a log line or a page
 * (the header is the sender's to choose).
 */
function hostOf(headers: HeadersInput): string | undefined {
  const host = getHeader(headers, 'host')
  return host === undefined ? undefined : serverText(host.toLowerCase(), 100)
}

/** The host name of a `Host` value, or `undefined` when it is not one. */
function hostnameOf(host: string): string | undefined {
  const url = `http://${host}`
  return URL.canParse(url) ? new URL(url).hostname : undefined
}

/**
 * For a callback without its sign-in cookie: the likeliest reason, a sign-in started on
 * another host than the redirect URI's (`127.0.0.1` and `localhost` do not share cookies).
 */
export function missingCookieHint(headers: HeadersInput, redirectUri: string): string {
  const expected = new URL(redirectUri)
  const host = hostOf(headers)
  const here =
    host !== undefined && hostnameOf(host) !== expected.hostname
      ? `This callback reached ${host}, but the redirect URI is on ${expected.host}. `
      : ''
  return (
    `${here}Cookies belong to one host name (any port): a sign-in started on another host than ` +
    `${expected.hostname} (127.0.0.1 and localhost are two) keeps its cookie there. Open the app ` +
    `at ${expected.origin} and connect from there.`
  )
}

/**
 * What the OAuth routes tell the developer: failures past the state check (and of the app's
 * hooks and stores) each time with their cause; the others (a declined consent, a stale or
 * forged callback, a cross-site disconnect) the first of each code in full, then a count once
 * a minute.
 */
export class OAuthLog {
  readonly #summaries = new Summarizer()

  report(logger: Logger, error: OAuthFlowError, path: string, hint: string | undefined): void {
    const line = `scheduling-kit: OAuth ${path} answered ${error.status} ${error.code}: ${error.message}${hint ? `\n${hint}` : ''}`
    if (EACH.has(error.code)) {
      const cause = error.cause === undefined ? '' : `\n${describeError(error.cause)}`
      emit(logger, 'error', `${line}${cause}`)
      return
    }
    this.#summaries.note(
      logger,
      error.code === 'access_denied' ? 'info' : 'warn',
      error.code,
      `${line}\n(Further ${error.code} answers are counted and reported once a minute.)`,
      (count) =>
        `scheduling-kit: ${count} more OAuth answer(s) ${error.status} ${error.code} in the last minute.`,
    )
  }

  #schemeTold = false

  /**
   * A sign-in that reached the app over HTTPS (as the framework says, or as a proxy's
   * `X-Forwarded-Proto` says) while `redirectUri` is `http:`: the cookies lose `Secure` and
   * their `__Host-` names. Told once per set of routes.
   */
  loginScheme(
    logger: Logger,
    request: OAuthRequest<unknown>,
    settings: RouteSettings<unknown>,
  ): void {
    if (this.#schemeTold || settings.options.secureCookies !== undefined) return
    if (new URL(settings.options.redirectUri).protocol !== 'http:') return
    const forwarded = getHeader(request.headers, 'x-forwarded-proto')?.split(',')[0]?.trim()
    const proxied = forwarded?.toLowerCase() === 'https'
    if (request.secure !== true && !proxied) return
    this.#schemeTold = true
    const how =
      request.secure === true
        ? 'over HTTPS'
        : 'through a proxy that says HTTPS (X-Forwarded-Proto), which the framework does not trust'
    emit(
      logger,
      'warn',
      `scheduling-kit: a sign-in reached the app ${how}, but redirectUri is ${serverText(settings.options.redirectUri, 200)} (http:): the sign-in cookies are set without Secure and without their __Host- names, so a network attacker or a sibling host can read or plant them. Set redirectUri to its https:// address${request.secure === true ? '' : " (and make the framework trust the proxy: Express app.set('trust proxy', ...), Koa app.proxy = true, Fastify trustProxy)"}, or set secureCookies explicitly to silence this. (told once)`,
    )
  }

  /** A sign-in started on another host than the redirect URI's: its cookie will not come back. */
  loginHost(logger: Logger, headers: HeadersInput, redirectUri: string): void {
    const host = hostOf(headers)
    const expected = new URL(redirectUri)
    // Only the development pitfall: behind a proxy the Host header may name an inner address
    // while the browser, on the public host, keeps the cookie just fine. Browsers send cookies
    // to every port of a host: only the host names are compared.
    if (host === undefined) return
    const hostname = hostnameOf(host)
    if (hostname === undefined || hostname === expected.hostname) return
    if (!isLoopback(hostname) || !isLoopback(expected.hostname)) return
    this.#summaries.note(
      logger,
      'warn',
      'login_host',
      `scheduling-kit: a sign-in started on ${hostname}, but the redirect URI is on ${expected.hostname}: ` +
        'the browser will not send the sign-in cookie back to the callback, which will answer ' +
        `400 state_missing. Open the app at ${expected.origin}, or set redirectUri to this host.`,
      (count) =>
        `scheduling-kit: ${count} more sign-in(s) started on another host than ${expected.host} in the last minute.`,
    )
  }
}
