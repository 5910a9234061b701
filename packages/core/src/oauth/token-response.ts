import { redactText } from '../errors/redact.js'
import { InvalidResponseError, OAuthError } from '../errors/transport.js'
import { type Answer, parseJson } from '../http/fetch.js'
import { retryAfterMs } from '../http/retry-after.js'
import type { TokenSet } from '../tokens/record.js'

/** The shortest token lifetime taken, in seconds. */
export const MIN_LIFETIME_S = 60

/**
 * A text of an error answer as the toolkit may quote it: without any credential of the request
 * (a server can echo the refresh token or the client secret). Only error answers: the tokens of
 * a successful one are kept exactly as sent (a new refresh token may hold the old one's text).
 */
const quoted = (value: unknown, sent: readonly string[]): string | undefined => {
  const text = str(value)
  return text === undefined ? undefined : redactText(text, sent)
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

/**
 * Turns a token endpoint answer into a `TokenSet`, or throws `OAuthError` (the server's error)
 * or `InvalidResponseError` (not a token response of section 2.3). `previousRefreshToken` is
 * kept when a refresh answer has none.
 */
export function readTokenResponse(
  answer: Answer,
  receivedAt: number,
  what: string,
  previousRefreshToken?: string,
  sent: readonly string[] = [],
): TokenSet {
  const body = parseJson(answer.text)
  const object =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : undefined
  if (answer.status < 200 || answer.status >= 300) {
    const wait =
      answer.status === 429 || answer.status === 503
        ? retryAfterMs(answer.headers.get('retry-after'), receivedAt)
        : undefined
    throw new OAuthError(
      answer.status,
      quoted(object?.error, sent),
      quoted(object?.error_description, sent),
      what,
      wait,
    )
  }
  if (object === undefined) throw new InvalidResponseError(what, 'not a JSON object', answer.status)
  if (str(object.error)) {
    // Some servers answer 200 with an error body.
    throw new OAuthError(
      400,
      quoted(object.error, sent),
      quoted(object.error_description, sent),
      what,
    )
  }
  const accessToken = str(object.access_token)
  if (accessToken === undefined) throw new InvalidResponseError(what, 'no access_token')
  const tokenType = str(object.token_type)
  if (tokenType === undefined || tokenType.toLowerCase() !== 'bearer') {
    throw new InvalidResponseError(what, 'token_type is not "bearer"')
  }
  const expiresIn =
    typeof object.expires_in === 'string' && /^\d+$/.test(object.expires_in)
      ? Number(object.expires_in)
      : object.expires_in
  if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
    throw new InvalidResponseError(what, 'expires_in is not a positive number of seconds')
  }
  const refreshToken = str(object.refresh_token) ?? previousRefreshToken
  // A lifetime under a minute is taken as a minute: a token of 1 s (or 0.001) would otherwise
  // cost a token call on nearly every read. A token the API refuses sooner is refreshed on its
  // 401, as any other.
  if (refreshToken === undefined) throw new InvalidResponseError(what, 'no refresh_token')
  const tokens: TokenSet = {
    accessToken,
    refreshToken,
    tokenType,
    expiresAt: receivedAt + Math.max(expiresIn, MIN_LIFETIME_S) * 1000,
    obtainedAt: receivedAt,
  }
  // RFC 6749 section 5.1: the granted scope, when the server says it. Left out otherwise, so a
  // refresh answer without one keeps the scope the record already has.
  const scope = str(object.scope)
  if (scope !== undefined) tokens.scope = scope
  return tokens
}
