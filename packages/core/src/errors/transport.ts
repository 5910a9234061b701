import { isSchedulingError, SchedulingError, serverText } from './errors.js'

// Errors of talking to the service over HTTP: its OAuth answers, the network, time-outs,
// answers that are not what they must be, redirects refused.

/**
 * The authorization server answered a token request with an error. `error` is its OAuth 2
 * error code (`invalid_grant`, `invalid_client`, ...) when it sent one.
 */
export class OAuthError extends SchedulingError<'oauth_error'> {
  readonly error: string | undefined
  readonly errorDescription: string | undefined
  /** The wait the authorization server asked for (`Retry-After` of a 429 or 503), in ms. */
  readonly retryAfterMs: number | undefined

  constructor(
    status: number,
    error: string | undefined,
    errorDescription: string | undefined,
    what: string,
    retryAfterMs?: number,
  ) {
    const code = error === undefined ? undefined : serverText(error, 64)
    const description = errorDescription === undefined ? undefined : serverText(errorDescription)
    super(
      'oauth_error',
      `${what} failed: the authorization server answered ${status}` +
        (code ? ` ${code}` : '') +
        (description ? ` (${description})` : '') +
        '.',
      { status },
    )
    this.error = code
    this.errorDescription = description
    this.retryAfterMs = retryAfterMs
  }
}

/** The system's reason a request got no answer (`ECONNREFUSED`, `ENOTFOUND`, ...), when known. */
function networkReason(cause: unknown): string {
  let current = cause
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return 'network error'
}

/** A URL as messages show it: no query string, no user info. */
export function displayUrl(url: string): string {
  if (!URL.canParse(url)) return serverText(url, 200)
  const u = new URL(url)
  return `${u.protocol}//${u.host}${u.pathname}`
}

/** The request never got an answer: connection refused, reset, DNS failure. */
export class NetworkError extends SchedulingError<'network_error'> {
  /** The address tried (without its query string). */
  readonly url: string | undefined

  constructor(what: string, cause: unknown, url?: string) {
    const where = url === undefined ? 'the server' : displayUrl(url)
    super('network_error', `${what} failed: no answer from ${where} (${networkReason(cause)}).`, {
      status: 502,
      cause,
    })
    this.url = url === undefined ? undefined : displayUrl(url)
  }
}

/** The request took longer than its time-out. */
export class TimeoutError extends SchedulingError<'timeout'> {
  constructor(what: string, ms: number, url?: string) {
    super(
      'timeout',
      `${what}${url === undefined ? '' : ` (${displayUrl(url)})`} timed out after ${ms} ms.`,
      { status: 504 },
    )
  }
}

/** The server answered, but not with what the spec says it answers. */
export class InvalidResponseError extends SchedulingError<'invalid_response'> {
  constructor(what: string, problem: string, status = 502) {
    super('invalid_response', `${what}: the server's answer is malformed: ${problem}.`, { status })
  }
}

/**
 * A list went on past what its reader bounded it to (`maxPages` pages, or `timeoutMs`): what
 * was read before stands; the rest was not followed. `pages` is how many were read.
 */
export class ListTooLongError extends SchedulingError<'list_too_long'> {
  readonly pages: number
  constructor(what: string, pages: number, bound: string) {
    super('list_too_long', `${what}: stopped after ${pages} pages, at ${bound}.`, { status: 502 })
    this.pages = pages
  }
}

/**
 * The server answered a request with a redirect (3xx). Redirects are never followed: following
 * one re-sends the form (client secret, refresh token, code, verifier) or the request to an
 * address the configured one did not name, and its answer would be taken as the service's.
 * `location` is the origin the redirect named (`undefined` when it named none or none readable).
 */
export class RedirectRefusedError extends SchedulingError<'redirect_refused'> {
  readonly location: string | undefined

  constructor(what: string, status: number, location: string | null, url: string) {
    const origin = locationOrigin(location, url)
    const where =
      origin === undefined
        ? 'without a readable Location'
        : origin === new URL(url).origin
          ? `to ${origin} (the same origin)`
          : `to another origin, ${origin}`
    super(
      'redirect_refused',
      `${what} (${displayUrl(url)}) was answered ${status}, a redirect ${where}; redirects are not followed, so nothing was sent there and the answer was not used. If the service really moved, configure its new address (authUrl or apiUrl).`,
      { status: 502 },
    )
    this.location = origin
  }
}

/** The origin a `Location` header names, resolved against the request's URL, cleaned for messages. */
function locationOrigin(location: string | null, url: string): string | undefined {
  if (location === null || location === '' || !URL.canParse(location, url)) return undefined
  const origin = new URL(location, url).origin
  return origin === 'null' ? undefined : serverText(origin, 200)
}

/** Whether `error` is the authorization server refusing a grant (`invalid_grant`). */
export function isInvalidGrant(error: unknown): error is OAuthError {
  return (
    isSchedulingError(error) &&
    error.code === 'oauth_error' &&
    (error as OAuthError).error === 'invalid_grant'
  )
}

/** Whether `error` is a time-out of ours (`TimeoutError`, from this copy of the package or another). */
export const isTimeout = (error: unknown): boolean =>
  isSchedulingError(error) && error.code === 'timeout'
