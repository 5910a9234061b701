import { isSchedulingError, SchedulingError, serverText } from './errors.js'
import { displayUrl } from './transport.js'

// The error of an API call the service answered with an error status.
/**
 * The field errors of a 422 answer (`{ "errors": { "url": [{ "message": "must be a valid URL" }] } }`),
 * as `field: message` lines, cleaned and capped; empty when the body has none.
 */
function fieldErrors(body: unknown): Record<string, string[]> {
  const errors = (body as { errors?: unknown } | undefined)?.errors
  const out: Record<string, string[]> = {}
  if (typeof errors !== 'object' || errors === null || Array.isArray(errors)) return out
  for (const [field, list] of Object.entries(errors).slice(0, 20)) {
    const messages = (Array.isArray(list) ? list : [list])
      .slice(0, 5)
      .map((item) =>
        typeof item === 'string'
          ? item
          : typeof (item as { message?: unknown })?.message === 'string'
            ? (item as { message: string }).message
            : undefined,
      )
      .filter((m): m is string => m !== undefined)
      .map((m) => serverText(m, 200))
    if (messages.length > 0) out[serverText(field, 64)] = messages
  }
  return out
}

/** The API answered with a non-2xx status. `body` is the parsed JSON, or the text. */
export class ApiError extends SchedulingError<'api_error'> {
  readonly body: unknown
  /** The address called (without its query string), when known. */
  readonly url: string | undefined
  /** The answer's headers, lower-case names (`retry-after`, `x-request-id`, ...). */
  readonly headers: Readonly<Record<string, string>>
  /** The method and path called: `POST /webhooks`. */
  readonly request: string
  /** A 422's errors by field: `{ url: ['must be a valid URL'] }`. Empty for other answers. */
  readonly fields: Readonly<Record<string, readonly string[]>>
  /** The wait a 429 or 503 asked for (`Retry-After`), in ms, when it gave one. */
  readonly retryAfterMs: number | undefined

  constructor(
    status: number,
    method: string,
    path: string,
    body: unknown,
    url?: string,
    more?: { headers?: Headers; retryAfterMs?: number; note?: string },
  ) {
    const fields = status === 422 ? fieldErrors(body) : {}
    const named = Object.entries(fields)
      .map(([field, messages]) => `${field} ${messages.join('; ')}`)
      .join(', ')
    super(
      'api_error',
      `${method} ${path} failed with status ${status}${url === undefined ? '' : ` (${displayUrl(url)})`}` +
        (named === '' ? '' : `: ${named}`) +
        `.${more?.note === undefined ? '' : ` ${more.note}`}`,
      { status },
    )
    this.body = body
    this.url = url === undefined ? undefined : displayUrl(url)
    this.request = `${method} ${path}`
    this.fields = fields
    this.retryAfterMs = more?.retryAfterMs
    const headers: Record<string, string> = {}
    more?.headers?.forEach((value, name) => {
      headers[name] = value
    })
    this.headers = headers
  }
}

/** True for an error the API answered (a non-2xx status), optionally of one status. */
export function isApiError(error: unknown, status?: number): error is ApiError {
  return (
    isSchedulingError(error) &&
    error.code === 'api_error' &&
    (status === undefined || error.status === status)
  )
}
