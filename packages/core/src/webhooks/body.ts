import { concat, toBytes } from '../bytes.js'
import { WebhookError } from '../errors.js'
import { beforeDeadline, readStream } from '../stream.js'
import { DEFAULT_BODY_TIMEOUT_MS } from './defaults.js'
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

function parsedBodyError(fix: string | undefined): WebhookError {
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

/** A Node-style readable (an `IncomingMessage`), recognised by shape: core has no Node types. */
interface EventReadable {
  on(event: 'data', fn: (chunk: Uint8Array | string) => void): unknown
  on(event: 'end' | 'close', fn: () => void): unknown
  on(event: 'error', fn: (error: unknown) => void): unknown
  removeListener(event: string, fn: (...args: never[]) => void): unknown
  pause(): unknown
  readableEnded?: boolean
}

function isEventReadable(value: object): value is EventReadable {
  const v = value as Partial<EventReadable>
  return (
    typeof v.on === 'function' &&
    typeof v.removeListener === 'function' &&
    typeof v.pause === 'function'
  )
}

/**
 * Reads a Node-style readable by its events (much cheaper than its async iterator). Past the
 * limit or the deadline it pauses and lets go: the stream is not destroyed, so the 413 or 408
 * can still be written (with `Connection: close`).
 */
function readEvents(
  stream: EventReadable,
  limit: number,
  timeoutMs: number,
  take: TakeBytes | undefined,
): Promise<Uint8Array | undefined> {
  if (stream.readableEnded) return Promise.resolve(new Uint8Array(0))
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = []
    let total = 0
    const timer = setTimeout(() => {
      done()
      stream.pause()
      reject(bodyTimeout(timeoutMs))
    }, timeoutMs)
    const done = () => {
      clearTimeout(timer)
      stream.removeListener('data', onData)
      stream.removeListener('end', onEnd)
      stream.removeListener('error', onError)
      stream.removeListener('close', onClose)
    }
    const onData = (chunk: Uint8Array | string) => {
      const bytes = toBytes(chunk)
      total += bytes.length
      if (total > limit) {
        done()
        stream.pause()
        resolve(undefined)
      } else {
        try {
          take?.(bytes.length)
        } catch (busy) {
          done()
          stream.pause()
          reject(busy)
          return
        }
        chunks.push(bytes)
      }
    }
    const onEnd = () => {
      done()
      resolve(concat(chunks, total))
    }
    const onError = (error: unknown) => {
      done()
      reject(error)
    }
    const onClose = () => {
      done()
      reject(new Error('The request closed before its body ended.'))
    }
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    stream.on('close', onClose)
  })
}

function isAsyncIterable(value: object): value is AsyncIterable<Uint8Array | string> {
  return typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function'
}

function isReadableStream(value: object): value is ReadableStream<Uint8Array> {
  return typeof (value as ReadableStream).getReader === 'function'
}

/**
 * Reads a body into bytes, never holding more than `limit` bytes: a stream is read chunk by
 * chunk and abandoned as soon as it passes the limit. Throws `payload_too_large`,
 * `body_timeout` when a stream has not ended within `timeoutMs`, or `body_parsed` when a body
 * parser already turned the body into an object (or read the stream).
 */
export async function readBody(
  source: BodySource | object,
  limit: number,
  fix?: string,
  timeoutMs = DEFAULT_BODY_TIMEOUT_MS,
  budget?: BodyBudget,
): Promise<Uint8Array> {
  if (source === null || source === undefined) return new Uint8Array(0)
  if (typeof source === 'string' || source instanceof Uint8Array) {
    const bytes = toBytes(source)
    if (bytes.length > limit) throw tooLarge(limit)
    return bytes
  }
  if (typeof source !== 'object') throw parsedBodyError(fix)
  if (budget === undefined) return readSource(source, limit, fix, timeoutMs, undefined)
  // Each chunk is taken from the budget as it arrives; all of them are given back at the end.
  let taken = 0
  const take = (bytes: number) => {
    if (!budget.take(bytes)) throw serverBusy(budget.max)
    taken += bytes
  }
  try {
    return await readSource(source, limit, fix, timeoutMs, take)
  } finally {
    budget.give(taken)
  }
}

/** Takes a chunk's bytes from a budget; throws `server_busy` when they do not fit. */
type TakeBytes = (bytes: number) => void

async function readSource(
  source: object,
  limit: number,
  fix: string | undefined,
  timeoutMs: number,
  take: TakeBytes | undefined,
): Promise<Uint8Array> {
  if (isReadableStream(source)) {
    if (source.locked) throw bodyAlreadyRead(fix)
    const bytes = await readStream(
      source,
      limit,
      { ms: timeoutMs, error: () => bodyTimeout(timeoutMs) },
      take,
    )
    if (bytes === undefined) throw tooLarge(limit)
    return bytes
  }
  if (isEventReadable(source)) {
    const bytes = await readEvents(source, limit, timeoutMs, take)
    if (bytes === undefined) throw tooLarge(limit)
    return bytes
  }
  if (isAsyncIterable(source)) {
    // Iterate by hand: leaving the loop early must not destroy a Node request stream, or the
    // 413 answer could not be written on its socket.
    const iterator = source[Symbol.asyncIterator]()
    const deadline = performance.now() + timeoutMs
    const chunks: Uint8Array[] = []
    let total = 0
    for (;;) {
      const { done, value } = await beforeDeadline(iterator.next(), deadline, () =>
        bodyTimeout(timeoutMs),
      )
      if (done) break
      const chunk = toBytes(value)
      total += chunk.length
      if (total > limit) throw tooLarge(limit)
      take?.(chunk.length)
      chunks.push(chunk)
    }
    return concat(chunks, total)
  }
  throw parsedBodyError(fix)
}
