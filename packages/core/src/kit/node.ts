import { utf8Length } from '../platform/bytes.js'
import type { BodySource } from '../webhooks/body.js'

/** What the kit reads of a Node request stream. */
export interface NodeStream {
  readonly readableDidRead?: boolean
  readonly readableEnded?: boolean
}

/**
 * The bytes to verify on Node, in the one order every adapter uses: the request stream while
 * nobody has read it; else the raw body an earlier middleware kept (`kept(holder)`: text or
 * bytes); else what a body parser left (`parsed(holder)`): text or bytes are checked against
 * what was received, an object makes core answer `body_parsed` with the adapter's fix. The
 * `holder` is where the framework's parsers leave them (Express's request, Koa's
 * `ctx.request`); `kept` and `parsed` run only when the stream was read, so an untouched
 * request never looks their absent properties up along the framework's prototype chain.
 */
export function nodeBody<H>(
  stream: NodeStream,
  holder: H,
  kept: (holder: H) => unknown,
  parsed: (holder: H) => unknown,
): BodySource | object {
  if (!stream.readableDidRead && !stream.readableEnded) return stream as BodySource
  const raw = kept(holder)
  if (typeof raw === 'string' || raw instanceof Uint8Array) return raw
  const body = parsed(holder)
  if (typeof body === 'string' || body instanceof Uint8Array) return body
  return (body as object | undefined) ?? {}
}

/** What the kit writes to a Node response. */
export interface NodeResponse {
  writeHead(status: number, headers: Record<string, string | string[]>): { end(body: string): void }
}

/**
 * Writes an answer to a Node response whole (with its length given, Node sends it in one piece
 * rather than chunked), or calls `next()` when there is none (the request is not core's). An
 * error while writing (a broken socket, headers already sent) goes to `next(error)`.
 */
export function writeNode(
  response: NodeResponse,
  answer: { status: number; headers: Record<string, string | string[]>; body: string } | undefined,
  next: (error?: unknown) => void,
): void {
  if (answer === undefined) {
    next()
    return
  }
  try {
    const headers = answer.headers
    // Core's webhook answers state their length; OAuth pages and redirects are measured here.
    headers['content-length'] ??= String(utf8Length(answer.body))
    response.writeHead(answer.status, headers).end(answer.body)
  } catch (error) {
    next(error)
  }
}

/** The options object of a `(secretOrOptions, options?)` factory, wherever it was given. */
export function optionsOf<T extends object>(
  secretOrOptions: unknown,
  options: T | undefined,
): Partial<T> {
  return (options ??
    (typeof secretOrOptions === 'object' ? secretOrOptions : undefined) ??
    {}) as Partial<T>
}

/**
 * The error of an answer the framework's own error path should take (a handler threw: 500; the
 * queue refused: 503), for an adapter that hands server errors on rather than answering them.
 */
export function serverErrorOf(
  answer: { status: number; error?: Error } | undefined,
): Error | undefined {
  return answer?.error !== undefined && answer.status >= 500 ? answer.error : undefined
}
