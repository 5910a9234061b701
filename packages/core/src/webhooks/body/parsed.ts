import { WebhookError } from '../../errors/errors.js'
import { toBytes } from '../../platform/bytes.js'
import { declaresOtherCharset } from './read.js'
import { parsedBodyError, tooLarge } from './refusals.js'

// A body the app's JSON parser turned into a value before the webhook handler ran (Express's
// `express.json()`, a Koa parser that keeps no raw copy, an h3 middleware that kept what
// `readBody` gave). The bytes are gone; what is left is the value. The service sends compact
// JSON, so the value's compact serialization (`JSON.stringify`) is, byte for byte, the body it
// signed whenever the parser was faithful. Those bytes are verified like any others.
//
// The HMAC proves the serialization is what the service signed; the request's length and the
// value's shape prove the bytes received were that serialization too. Every other way of
// writing a JSON value (white space, escapes, duplicate keys, a byte-order mark, `-0`, `1.0`)
// is longer than its compact form, so it cannot have the declared length, unless something
// else in the body was written shorter. Only these are: an integer written with an exponent
// (`100` as `1e2`, `1000` as `1e3`), a decimal with leading zeros (`0.05` as `5e-2`), a number
// already in exponent form (`e` as `E`), the hex digits of a `\u` escape in the other case,
// keys a parser reorders (integer-like keys come first in a JS object), and bytes a decoder
// replaced (invalid UTF-8 as U+FFFD, another charset). A value holding any of them has more
// than one writing of its length, so it is refused like any parsed body: `body_parsed`, with
// the framework's fix. What is accepted was sent exactly as the service signed it.

/**
 * Whether an adapter handed over a value a parser made, rather than bytes or a stream: a plain
 * object or an array (what `JSON.parse` returns for a JSON body).
 */
export function isParsedValue(body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false
  if (Array.isArray(body)) return true
  const proto = Object.getPrototypeOf(body)
  if (proto !== Object.prototype && proto !== null) return false
  // A plain object that reads like a stream is one an adapter built: read, not serialized.
  const source = body as Partial<Record<'on' | 'getReader' | typeof Symbol.asyncIterator, unknown>>
  return (
    typeof source.on !== 'function' &&
    typeof source.getReader !== 'function' &&
    typeof source[Symbol.asyncIterator] !== 'function'
  )
}

/**
 * The compact serialization of a parsed body, to be verified in place of the bytes. Refuses
 * with `body_parsed` what cannot be proven to be the body received: a value that does not
 * serialize, a serialization whose length is not the request's `Content-Length` (`declared`,
 * `NaN` when absent), a charset other than UTF-8, or a value with another writing of the same
 * length (`hasOneWriting`). The serialization is never longer than `limit`.
 */
export function serializedBody(
  value: object,
  request: { declared: number; contentType: string | undefined },
  limit: number,
  fix: string | undefined,
): Uint8Array {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch {
    throw parsedBodyError(fix) // a cycle, a BigInt, a value nested past the stack
  }
  if (typeof text !== 'string') throw parsedBodyError(fix)
  const bytes = toBytes(text)
  if (bytes.length > limit) throw tooLarge(limit)
  const { declared, contentType } = request
  if (declared >= 0 && bytes.length !== declared) throw parsedBodyError(fix)
  if (declaresOtherCharset(contentType) || !hasOneWriting(value)) throw parsedBodyError(fix)
  return bytes
}

/** An array index as a JS object orders it: before every other key, whatever the text said. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/

/**
 * Whether no other JSON text of the same length parses to this value (see the top of this
 * file): no number with a shorter-or-equal exponent writing, no text `JSON.stringify` escapes
 * as `\u` or a decoder could have made (U+FFFD, lone surrogates, controls), no integer-like
 * key beside others. Walks the value with a stack of its own: no depth is too deep.
 */
export function hasOneWriting(value: unknown): boolean {
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'number') {
      if (!numberHasOneWriting(v)) return false
    } else if (typeof v === 'string') {
      if (!textHasOneWriting(v)) return false
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item)
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v)
      for (const key of keys) {
        if (!textHasOneWriting(key) || (keys.length > 1 && INDEX_KEY.test(key))) return false
        stack.push((v as Record<string, unknown>)[key])
      }
    }
  }
  return true
}

function numberHasOneWriting(n: number): boolean {
  if (Object.is(n, -0)) return false
  const text = String(n)
  // 1e21 (e/E), 100 (1e2), 0.05 (5e-2): each has a writing no longer than its own.
  return !text.includes('e') && !text.endsWith('00') && !/^-?0\.0/.test(text)
}

/** The controls `JSON.stringify` writes with a short escape (`\b \t \n \f \r`), as bits. */
const SHORT_ESCAPES = 0b11011100000000

/** Text with nothing `JSON.stringify` writes as `\u` and no replacement character. */
function textHasOneWriting(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 ? ((SHORT_ESCAPES >> code) & 1) === 0 : code === 0xfffd) return false
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    } else if (code >= 0xdc00 && code <= 0xdfff) return false
  }
  return true
}

/**
 * A verification of a serialized body: a signature that does not match it is told as the body
 * having been parsed (the real bytes may still be genuine, just not compact), never as a forged
 * signature. Every other outcome passes through.
 */
export function verifiedAsParsed<T>(
  verifying: T | Promise<T>,
  fix: string | undefined,
): Promise<T> {
  return Promise.resolve(verifying).catch((error: unknown) => {
    if (error instanceof WebhookError && error.code === 'signature_invalid') {
      throw parsedBodyError(fix)
    }
    throw error
  })
}
