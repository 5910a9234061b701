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
  'Pass the untouched Request to handler.fetch() before anything reads its body (in Hono, ' +
  'c.req.json() reads c.req.raw: route the webhook path to handler.fetch(c.req.raw) first).'

export function parsedBodyError(fix: string | undefined): WebhookError {
  return new WebhookError(
    'body_parsed',
    'The request body was already parsed into an object by a body parser, so the exact bytes ' +
      `the signature covers are gone. ${fix ?? DEFAULT_FIX}`,
  )
}

/** A body stream someone read (or locked) before the webhook handler got it. */
export function bodyAlreadyRead(fix: string | undefined): WebhookError {
  return new WebhookError(
    'body_parsed',
    'The request body was already read by something before the webhook handler, so the exact ' +
      `bytes the signature covers are gone. ${fix ?? DEFAULT_FIX}`,
  )
}

export function bodyTimeout(ms: number): WebhookError {
  return new WebhookError(
    'body_timeout',
    `The webhook body did not finish arriving within ${ms} ms (option bodyTimeoutMs); the connection is closed.`,
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
    `Webhook bodies still arriving already hold ${max} bytes (option maxPendingBytes): ` +
      'answered 503 without reading this one, so the service delivers it again later.',
  )
}

export function tooLarge(limit: number): WebhookError {
  return new WebhookError(
    'payload_too_large',
    `The webhook body is larger than the limit of ${limit} bytes (option bodyLimit).`,
  )
}
