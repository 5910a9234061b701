import {
  type ConfigErrorCode,
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
  // Set in the constructor, not as a field: a class with a computed field runs code where it is
  // defined, so a bundler could not drop it from an app that never uses it.
  declare readonly [BRAND]: true

  constructor(code: C, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    ;(this as { [BRAND]: true })[BRAND] = true
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

/**
 * What never reaches a log line, a message or a page from text someone else chose: control
 * characters (C0, DEL, C1: line breaks, ESC and CSI, NEL), format characters (bidirectional
 * overrides and isolates, zero-width characters, the byte-order mark, tag characters, soft
 * hyphens), line and paragraph separators, and lone surrogates.
 */
const UNSAFE_TEXT = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu

/**
 * Any value a store or a server handed back, as text to show (before `serverText` or an HTML
 * escape): a string as it is, `null` and `undefined` as nothing, an object as its JSON (or
 * `[unreadable]` when it has none), anything else as `String` gives it.
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return ''
  if (typeof value !== 'object') return String(value)
  try {
    return JSON.stringify(value) ?? ''
  } catch {
    return '[unreadable]'
  }
}

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
