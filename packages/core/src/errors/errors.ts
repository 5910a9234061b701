import {
  type ConfigErrorCode,
  OAUTH_FLOW_ERROR_STATUS,
  type OAuthFlowErrorCode,
  type SchedulingErrorCode,
  WEBHOOK_ERROR_STATUS,
  type WebhookErrorCode,
} from './codes.js'

const BRAND = /* @__PURE__ */ Symbol.for('scheduling-kit.error')

/**
 * Base class of every error this toolkit throws. Check with `isSchedulingError(e)`:
 * it works across copies of the package (ESM and CJS, or two versions).
 */
export class SchedulingError<C extends string = SchedulingErrorCode> extends Error {
  readonly code: C
  /** The HTTP status this error answers with, when it is answered over HTTP. */
  readonly status: number
  readonly [BRAND] = true

  constructor(code: C, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.status = options?.status ?? 500
  }

  /** The JSON error body: `{ error: { code, message } }`. Never carries a secret. */
  toJSON(): { error: { code: C; message: string } } {
    return { error: { code: this.code, message: this.message } }
  }
}

/**
 * An error met while receiving a webhook; `status` is what the endpoint answers. A refusal
 * (4xx) carries no stack trace: it is an answer to what a sender sent, not a fault in code, and
 * capturing the trace was the largest cost of refusing a forged request.
 */
export class WebhookError extends SchedulingError<WebhookErrorCode> {
  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    const status = WEBHOOK_ERROR_STATUS[code]
    const limit = Error.stackTraceLimit
    if (status < 500) Error.stackTraceLimit = 0
    super(code, message, { status, cause: options?.cause })
    Error.stackTraceLimit = limit
  }
}

/** Thrown at set-up time when options are missing or wrong. */
export class ConfigError extends SchedulingError<ConfigErrorCode> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_options', message, { status: 500, cause: options?.cause })
  }
}

/** True for any error thrown by scheduling-kit, whichever copy of the package threw it. */
export function isSchedulingError(error: unknown): error is SchedulingError<string> {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[BRAND] === true &&
    typeof (error as { code?: unknown }).code === 'string'
  )
}

/** True for a webhook error, optionally of one code. */
export function isWebhookError(error: unknown, code?: WebhookErrorCode): error is WebhookError {
  return (
    isSchedulingError(error) &&
    Object.hasOwn(WEBHOOK_ERROR_STATUS, error.code) &&
    (code === undefined || error.code === code)
  )
}

/** True for an error of the OAuth routes, optionally of one code. */
export function isOAuthFlowError(
  error: unknown,
  code?: OAuthFlowErrorCode,
): error is OAuthFlowError {
  return (
    isSchedulingError(error) &&
    Object.hasOwn(OAUTH_FLOW_ERROR_STATUS, error.code) &&
    (code === undefined || error.code === code)
  )
}

/**
 * What never reaches a log line, a message or a page from text someone else chose: control
 * characters (C0, DEL, C1: line breaks, ESC and CSI, NEL), format characters (bidirectional
 * overrides and isolates, zero-width characters, the byte-order mark, tag characters, soft
 * hyphens), line and paragraph separators, and lone surrogates.
 */
const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu

/**
 * The one cleaning of text a sender or a server chose (a header, a query parameter, an id, an
 * error description), applied before it reaches any log line, message or page: characters in
 * `UNSAFE_TEXT` become spaces, runs of white space one space, and it is cut to `max`
 * characters. Linear in `max`, whatever the input's length: only its first `4 * max`
 * characters are read.
 */
export function serverText(text: string, max = 200): string {
  const clean = text
    .slice(0, max * 4)
    .replace(UNSAFE_TEXT, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  if (clean.length <= max) return clean
  // Never cut a surrogate pair in half.
  const code = clean.charCodeAt(max - 2)
  const end = code >= 0xd800 && code <= 0xdbff ? max - 2 : max - 1
  return `${clean.slice(0, end)}…`
}

/**
 * The authorization server answered a token request with an error. `error` is its OAuth 2
 * error code (`invalid_grant`, `invalid_client`, ...) when it sent one.
 */
export class OAuthError extends SchedulingError<'oauth_error'> {
  readonly error: string | undefined
  readonly errorDescription: string | undefined

  constructor(
    status: number,
    error: string | undefined,
    errorDescription: string | undefined,
    what: string,
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

/** No tokens are stored for this key: the account was never connected, or was disconnected. */
export class NotConnectedError extends SchedulingError<'not_connected'> {
  readonly key: string

  constructor(key: string) {
    super('not_connected', `No tokens are stored for "${key}": connect the account first.`, {
      status: 401,
    })
    this.key = key
  }
}

/**
 * The refresh token was refused (`invalid_grant`) and no other process had refreshed it: the
 * user must connect the account again (send them through the OAuth flow).
 */
export class ReauthorizationRequiredError extends SchedulingError<'reauthorization_required'> {
  readonly key: string

  constructor(key: string, options?: { cause?: unknown }) {
    super(
      'reauthorization_required',
      `The connection "${key}" must be authorized again: its refresh token was refused.`,
      { status: 401, cause: options?.cause },
    )
    this.key = key
  }
}

/** True for failures worth retrying: network, time-out, malformed answer, 429 and 5xx. */
export function isTransientError(error: unknown): boolean {
  if (!isSchedulingError(error)) return false
  if (
    error.code === 'network_error' ||
    error.code === 'timeout' ||
    error.code === 'invalid_response'
  )
    return true
  return (
    (error.code === 'oauth_error' || error.code === 'api_error') &&
    (error.status >= 500 || error.status === 429)
  )
}

/** An error of the OAuth routes (`/login`, `/callback`, `/disconnect`); `status` is the answer. */
export class OAuthFlowError extends SchedulingError<OAuthFlowErrorCode> {
  constructor(code: OAuthFlowErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, { status: OAUTH_FLOW_ERROR_STATUS[code], cause: options?.cause })
  }
}
