import { WebhookError } from '../errors/errors.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import type { Logger } from '../log.js'
import type { BodySource } from './body/streams.js'

/** A request in plain data, as an adapter gives it. */
export interface WebhookRequest {
  method: string
  /** Path (a query string is ignored), relative to where the handler is mounted. */
  path: string
  headers: HeadersInput
  /** The raw body or a stream of it. An object means a body parser got there first. */
  body: BodySource | object
  /**
   * How to fix, on the adapter's framework, a body something read or parsed before the handler:
   * the sentence `body_parsed` errors end with.
   */
  fix?: string
  /** The framework says the body was already read (a Fetch `Request`'s `bodyUsed`). */
  bodyUsed?: boolean
  /** The framework's logger (Fastify's `request.log`), used when no `logger` option is given. */
  logger?: Logger
  /**
   * The adapter hands 5xx answers' errors to the framework's error path (Express's `next(err)`),
   * which logs them: they are not logged here too.
   */
  errorsToFramework?: boolean
}

/** The longest `Content-Type` read; a longer one is not the service's and is refused unread. */
const MAX_CONTENT_TYPE = 256

export function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined || value.length > MAX_CONTENT_TYPE) return false
  if (value === 'application/json') return true
  const type = value.split(';', 1)[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** Refuses, before any byte of the body is read, what the service never sends. */
export function checkRequestLine(request: WebhookRequest, path: string): void {
  const { method } = request
  if (method !== 'POST' && method.toUpperCase() !== 'POST') {
    throw new WebhookError('method_not_allowed', `Only POST is accepted on ${path}.`)
  }
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) {
    throw new WebhookError(
      'unsupported_media_type',
      'Webhooks are sent as application/json, not this content type.',
    )
  }
  const encoding = getHeader(request.headers, 'content-encoding')
  if (
    encoding !== undefined &&
    (encoding.length > MAX_CONTENT_TYPE || encoding.trim().toLowerCase() !== 'identity')
  ) {
    // The signature covers the bytes sent; a decoded body is not them.
    throw new WebhookError(
      'unsupported_media_type',
      'Webhooks are sent without a Content-Encoding: the signature covers the bytes as sent.',
    )
  }
}
