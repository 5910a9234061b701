import type { BodySource } from './streams.js'

/** What is read of a Node request stream. */
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
