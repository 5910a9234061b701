import { beforeDeadline, readStream } from '../../http/stream.js'
import { concat, toBytes } from '../../platform/bytes.js'
import { DEFAULT_BODY_TIMEOUT_MS } from '../defaults.js'
import type { RawBody } from '../signature.js'
import type { BodyBudget } from './budget.js'
import { bodyAlreadyRead, bodyTimeout, parsedBodyError, serverBusy, tooLarge } from './refusals.js'

// Reading a request body within its limits: a Node-style readable by its events, a Web stream,
// an async iterable, or bytes already at hand.

/** Where a request body comes from: bytes already read, a Node stream, or a Web stream. */
export type BodySource =
  | RawBody
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array>
  | null
  | undefined

/** A Node-style readable (an `IncomingMessage`), recognised by shape: core has no Node types. */
export interface EventReadable {
  on(event: 'data', fn: (chunk: Uint8Array | string) => void): unknown
  on(event: 'end' | 'close', fn: () => void): unknown
  on(event: 'error', fn: (error: unknown) => void): unknown
  removeListener(event: string, fn: (...args: never[]) => void): unknown
  pause(): unknown
  readableEnded?: boolean
}

export function isEventReadable(value: object): value is EventReadable {
  const v = value as Partial<EventReadable>
  return (
    typeof v.on === 'function' &&
    typeof v.removeListener === 'function' &&
    typeof v.pause === 'function'
  )
}

/**
 * Reads a Node-style readable by its events (much cheaper than its async iterator), within
 * `limit` bytes and `timeoutMs`; `settled` runs once, however the read ends. Past the limit or
 * the deadline it pauses and lets go: the stream is not destroyed, so the 413 or 408 can still
 * be written (with `Connection: close`). A read that ends well leaves its listeners in place
 * (they do nothing once it is over, and the request is dropped with them): removing four
 * listeners from every request costs more than the read.
 */
export function readEvents(
  stream: EventReadable,
  limit: number,
  timeoutMs: number,
  take: TakeBytes | undefined,
  settled?: () => void,
): Promise<Uint8Array> {
  if (stream.readableEnded) {
    settled?.()
    return Promise.resolve(new Uint8Array(0))
  }
  return new Promise((resolve, reject) => {
    let chunks: Uint8Array[] = []
    let total = 0
    let open = true
    const end = (): void => {
      open = false
      clearTimeout(timer)
      settled?.()
    }
    // Refused halfway: stop taking chunks and leave the rest unread.
    const fail = (error: unknown): void => {
      end()
      stream.removeListener('data', onData)
      stream.pause()
      chunks = []
      reject(error)
    }
    const timer = setTimeout(() => fail(bodyTimeout(timeoutMs)), timeoutMs)
    const onData = (chunk: Uint8Array | string): void => {
      if (!open) return
      const bytes = toBytes(chunk)
      total += bytes.length
      if (total > limit) {
        fail(tooLarge(limit))
        return
      }
      if (take !== undefined) {
        try {
          take(bytes.length)
        } catch (busy) {
          fail(busy)
          return
        }
      }
      chunks.push(bytes)
    }
    stream.on('data', onData)
    stream.on('end', () => {
      if (!open) return
      end()
      const body = concat(chunks, total)
      chunks = []
      resolve(body)
    })
    stream.on('error', (error: unknown) => {
      if (open) fail(error)
    })
    stream.on('close', () => {
      if (open) fail(new Error('The request closed before its body ended.'))
    })
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
  if (isEventReadable(source)) return readEvents(source, limit, timeoutMs, take)
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
