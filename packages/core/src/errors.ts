const BRAND = Symbol.for('scheduling-kit.error')

/** Codes of errors raised while receiving a webhook, each with the HTTP status it answers with. */
export const WEBHOOK_ERROR_STATUS = {
  not_found: 404,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  payload_too_large: 413,
  signature_missing: 401,
  signature_invalid: 401,
  secret_whitespace: 401,
  secret_unknown: 401,
  invalid_json: 400,
  invalid_envelope: 400,
  invalid_type: 400,
  invalid_id: 400,
  delivery_in_progress: 409,
  body_parsed: 500,
  handler_failed: 500,
  queue_rejected: 503,
} as const

export type WebhookErrorCode = keyof typeof WEBHOOK_ERROR_STATUS

/** Codes of errors raised when the library is configured wrongly. */
export type ConfigErrorCode = 'invalid_options'

export type SchedulingErrorCode = WebhookErrorCode | ConfigErrorCode

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

/** An error met while receiving a webhook; `status` is what the endpoint answers. */
export class WebhookError extends SchedulingError<WebhookErrorCode> {
  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, { status: WEBHOOK_ERROR_STATUS[code], cause: options?.cause })
  }
}

/** Thrown at set-up time when options are missing or wrong. */
export class ConfigError extends SchedulingError<ConfigErrorCode> {
  constructor(message: string) {
    super('invalid_options', message, { status: 500 })
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
    error.code in WEBHOOK_ERROR_STATUS &&
    (code === undefined || error.code === code)
  )
}
