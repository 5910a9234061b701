import { WebhookError } from '../../errors/errors.js'

// The refusals of a body: each says what happened to the bytes and how to fix it.

/**
 * The fix a `body_parsed` error ends with when the adapter gives none (each adapter passes its
 * framework's own, as `WebhookRequest.fix`).
 */
const DEFAULT_FIX =
  'Run the webhook handler before any JSON body parser, or pass it the raw body as a string ' +
  'or Uint8Array.'

/** The fix for `handler.fetch()`: a Fetch `Request` whose body something read. */
export const FETCH_FIX =
  'Pass the Request to handler.fetch() before anything reads its body (in Hono, route the ' +
  'webhook path to handler.fetch(c.req.raw) before c.req.json()).'

export function parsedBodyError(fix: string | undefined): WebhookError {
  return new WebhookError(
    'body_parsed',
    'The request body was already parsed into an object by a body parser, so the exact bytes ' +
      `the signature covers are gone. ${fix ?? DEFAULT_FIX}`,
  )
}

/** A body stream someone read (or locked) before the webhook handler got it; `fix` mends it. */
export function streamAlreadyRead(fix: string): WebhookError {
  return new WebhookError(
    'body_parsed',
    `The request body was already read before the webhook handler, so the bytes the signature covers are gone. ${fix}`,
  )
}

/** `streamAlreadyRead` with the adapter's fix, or the default one. */
export const bodyAlreadyRead = (fix: string | undefined): WebhookError =>
  streamAlreadyRead(fix ?? DEFAULT_FIX)

export function bodyTimeout(ms: number): WebhookError {
  return new WebhookError(
    'body_timeout',
    `The webhook body took over ${ms} ms to arrive (option bodyTimeoutMs); the connection is closed.`,
  )
}

/** A body handed over as text or bytes whose length is not the `Content-Length` received. */
export function bodyChanged(
  declared: number,
  given: number,
  fix: string | undefined,
): WebhookError {
  return new WebhookError(
    'body_parsed',
    `The body handed to the webhook handler is ${given} bytes but the request declared ${declared}: ` +
      'a body parser decoded it (a byte-order mark, a charset) before verification, so the bytes ' +
      `the signature covers are gone. ${fix ?? DEFAULT_FIX}`,
  )
}

/** Text a parser decoded from bytes that were not UTF-8: no longer the bytes received. */
export function textNotFaithful(fix: string | undefined): WebhookError {
  return new WebhookError(
    'body_parsed',
    'The body handed to the webhook handler is text holding U+FFFD replacement characters or ' +
      'unpaired surrogates, or decoded from a charset other than UTF-8: a body parser decoded ' +
      'it before verification, so the bytes the ' +
      `signature covers are gone. ${fix ?? DEFAULT_FIX}`,
  )
}

export function serverBusy(max: number): WebhookError {
  return new WebhookError(
    'server_busy',
    `Bodies still arriving hold ${max} bytes (option maxPendingBytes): this one is answered ` +
      '503 unread, and the service delivers it again.',
  )
}

export function tooLarge(limit: number): WebhookError {
  return new WebhookError(
    'payload_too_large',
    `The webhook body is larger than the limit of ${limit} bytes (option bodyLimit).`,
  )
}
