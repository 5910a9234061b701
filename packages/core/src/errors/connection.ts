import { OAUTH_FLOW_ERROR_STATUS, type OAuthFlowErrorCode } from './codes.js'
import { isSchedulingError, SchedulingError } from './errors.js'

// Errors about a connected account and the OAuth routes that make and end connections.

/** No tokens are stored for this key: the account was never connected, or was disconnected. */
export class NotConnectedError extends SchedulingError<'not_connected'> {
  readonly key: string

  /** `why`: what makes a stored record no connection of this app (another app's, rolled back). */
  constructor(key: string, why?: string) {
    super(
      'not_connected',
      why === undefined
        ? `No tokens are stored for "${key}": connect the account first.`
        : `The tokens stored for "${key}" are not used: ${why}. Connect the account again.`,
      { status: 401 },
    )
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

/** An error of the OAuth routes (`/login`, `/callback`, `/disconnect`); `status` is the answer. */
export class OAuthFlowError extends SchedulingError<OAuthFlowErrorCode> {
  constructor(code: OAuthFlowErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, { status: OAUTH_FLOW_ERROR_STATUS[code], cause: options?.cause })
  }
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
