import { getHeader } from '../../http/headers.js'
import type { WebhookRequest } from '../request.js'
import type { BodyBudget } from './budget.js'
import { bodyAlreadyRead, bodyChanged, serverBusy, textNotFaithful } from './refusals.js'
import { isEventReadable, readBody, readEvents } from './streams.js'

// The one way a delivery's body is read: from what the adapter handed over (a Node request, a
// Web stream, or text and bytes a parser kept) to the bytes the signature covers, within the
// handler's limits. `streams.ts` reads each kind of source; `refusals.ts` says what went wrong.

/** The limits a body is read within (the handler's settings). */
export interface BodyLimits {
  /** The most bytes (option `bodyLimit`). */
  limit: number
  bodyTimeoutMs: number
  /** The bytes held at once by bodies still arriving (option `maxPendingBytes`). */
  budget: BodyBudget
}

/** The body's bytes within the limits; bytes already at hand are used as they are. */
export function requestBytes(
  request: WebhookRequest,
  declared: number,
  settings: BodyLimits,
): Uint8Array | Promise<Uint8Array> {
  const raw = request.body
  if (request.bodyUsed === true) throw bodyAlreadyRead(request.fix)
  const { budget } = settings
  // A Node request (every Node adapter's case) of a declared length is read by its events: the
  // length is taken from the budget whole before the first byte is read, given back at the end.
  if (declared >= 0 && typeof raw === 'object' && raw !== null && isEventReadable(raw)) {
    if (!budget.take(declared)) throw serverBusy(budget.max)
    return readEvents(raw, settings.limit, settings.bodyTimeoutMs, undefined, () =>
      budget.give(declared),
    )
  }
  // Text a parser decoded must be a faithful copy of the bytes, whatever its length.
  if (
    typeof raw === 'string' &&
    (!isFaithfulText(raw) || declaresOtherCharset(getHeader(request.headers, 'content-type')))
  ) {
    throw textNotFaithful(request.fix)
  }
  if (
    raw instanceof Uint8Array &&
    raw.length <= settings.limit &&
    !(declared >= 0 && raw.length !== declared)
  ) {
    return raw
  }
  const inMemory = typeof raw === 'string' || raw instanceof Uint8Array
  const check = (body: Uint8Array) => {
    // Text or bytes a parser kept must be the bytes received: the same length at least.
    if (inMemory && declared >= 0 && body.length !== declared) {
      throw bodyChanged(declared, body.length, request.fix)
    }
    return body
  }
  if (inMemory || !(declared >= 0)) {
    // Bytes at hand are held already; a stream of unknown length takes its chunks as they come.
    return readBody(
      raw,
      settings.limit,
      request.fix,
      settings.bodyTimeoutMs,
      inMemory ? undefined : budget,
    ).then(check)
  }
  // Another stream of a declared length: taken whole too.
  if (!budget.take(declared)) throw serverBusy(budget.max)
  return readBody(raw, settings.limit, request.fix, settings.bodyTimeoutMs).finally(() =>
    budget.give(declared),
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
