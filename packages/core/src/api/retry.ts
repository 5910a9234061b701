import type { ApiError } from '../errors/api.js'
import { isSchedulingError } from '../errors/errors.js'
import { wholeNumber } from '../validate.js'

/** How the API client retries (option `retry`). */
export interface ApiRetryOptions {
  /** Tries in all, the first included. Default 4. */
  attempts?: number
  /** First backoff when the server gave no `Retry-After`, in ms; doubled each time, with full jitter. Default 500. */
  baseDelayMs?: number
  /** Longest backoff without `Retry-After`, in ms. Default 10 000. */
  maxDelayMs?: number
  /**
   * Longest `Retry-After` honoured, in ms. A 429 asking for a longer wait is not waited on:
   * it is thrown at once as an `ApiError` whose `retryAfterMs` says how long. Default 60 000.
   */
  maxRetryAfterMs?: number
}

export interface RetrySettings {
  attempts: number
  baseDelay: number
  maxDelay: number
  maxRetryAfter: number
}

function positive(value: number | undefined, fallback: number, name: string): number {
  return wholeNumber('createSchedulingClient', `retry.${name}`, value, fallback, { min: 0 })
}

export function retrySettings(options: ApiRetryOptions | undefined): RetrySettings {
  return {
    attempts: Math.max(1, positive(options?.attempts, 4, 'attempts')),
    baseDelay: positive(options?.baseDelayMs, 500, 'baseDelayMs'),
    maxDelay: positive(options?.maxDelayMs, 10_000, 'maxDelayMs'),
    maxRetryAfter: positive(options?.maxRetryAfterMs, 60_000, 'maxRetryAfterMs'),
  }
}

/** Full-jitter exponential backoff before try `attempt + 1` (`attempt` starts at 1). */
export function backoffMs(attempt: number, settings: RetrySettings): number {
  const ceiling = Math.min(settings.maxDelay, settings.baseDelay * 2 ** (attempt - 1))
  return Math.floor(Math.random() * ceiling)
}

/** Methods a failure may be repeated for: the request changed nothing, or repeating it changes nothing more. */
export const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE', 'PUT'])

/** Whether a failure may be tried again, and after how long; `undefined` when it may not. */
export function nextWait(
  error: unknown,
  method: string,
  attempt: number,
  settings: RetrySettings,
): number | undefined {
  if (attempt >= settings.attempts || !isSchedulingError(error)) return undefined
  if (error.code === 'api_error' && error.status === 429) {
    const asked = (error as ApiError).retryAfterMs
    if (asked !== undefined) return asked <= settings.maxRetryAfter ? asked : undefined
    return backoffMs(attempt, settings)
  }
  if (!IDEMPOTENT.has(method)) return undefined
  const transient =
    error.code === 'network_error' ||
    error.code === 'timeout' ||
    (error.code === 'api_error' && error.status >= 500)
  if (!transient) return undefined
  const asked = error.code === 'api_error' ? (error as ApiError).retryAfterMs : undefined
  return asked !== undefined && asked <= settings.maxRetryAfter
    ? asked
    : backoffMs(attempt, settings)
}
