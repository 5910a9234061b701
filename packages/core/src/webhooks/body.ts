import { WebhookError } from '../errors/errors.js'
import type { RawBody } from './signature.js'

/** Where a request body comes from: bytes already read, a Node stream, or a Web stream. */
export type BodySource =
  | RawBody
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array>
  | null
  | undefined

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

/**
 * Whether text a body parser handed over can be the bytes received: a decoder turns bytes that
 * are not UTF-8 into U+FFFD (one for a byte, or for several), so text holding one, or a lone
 * surrogate, no longer says which bytes arrived, whatever its length. One pass, no copy.
 */
export function isFaithfulText(text: string): boolean {
  return text.indexOf('\ufffd') < 0 && (text as string & { isWellFormed(): boolean }).isWellFormed()
}

/**
 * Whether a `Content-Type` names a charset other than UTF-8: text a parser decoded by it is
 * not the bytes received, whatever its length (`é` sent as one Latin-1 byte re-encodes as two).
 */
export function declaresOtherCharset(contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  for (const part of contentType.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim().toLowerCase() !== 'charset') continue
    const charset = part
      .slice(eq + 1)
      .trim()
      .toLowerCase()
      .replaceAll('"', '')
    if (charset !== 'utf-8' && charset !== 'utf8') return true
  }
  return false
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

/**
 * The bytes held at once by bodies still arriving, across the requests of one handler: a
 * request that would take it past its limit is answered 503 `server_busy`, and the service
 * delivers it again later. Bounds the memory that many slow or stalled senders can hold.
 */
export class BodyBudget {
  #held = 0
  constructor(readonly max: number) {}

  /** Bytes held now. */
  get held(): number {
    return this.#held
  }

  /** Takes `bytes` from the budget; `false` (and nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.max) return false
    this.#held += bytes
    return true
  }

  give(bytes: number): void {
    this.#held -= bytes
  }
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
