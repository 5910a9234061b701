import { ConfigError } from '../errors/errors.js'
import { getHeader } from '../http/headers.js'
import { readStream } from '../http/stream.js'
import {
  bodyTimeout,
  FETCH_FIX,
  serverBusy,
  streamAlreadyRead,
  tooLarge,
} from '../webhooks/body/refusals.js'
import { checkRequestLine } from '../webhooks/request.js'
import { type BodyLimitOptions, bodyLimits } from './body.js'
import type { WebhookPart } from './path.js'

// The part that reads a Fetch `Request`'s body (Workers, Deno, Bun, Next.js route handlers):
// the request line checked, then the body's stream read chunk by chunk within the limits. It
// reads nothing else: `readBody()` reads every kind of body (a Node request, text or bytes a
// parser kept) and weighs more.

/** Checks the request line and reads a Fetch body's stream within the limits. */
export function readFetchBody(options?: BodyLimitOptions): WebhookPart {
  const { limit, bodyTimeoutMs, budget } = bodyLimits(options, 'readFetchBody')
  const deadline = { ms: bodyTimeoutMs, error: () => bodyTimeout(bodyTimeoutMs) }
  return async (delivery, next) => {
    const { request } = delivery
    checkRequestLine(request, delivery.path)
    if (delivery.body !== undefined) return next()
    if (Number(getHeader(request.headers, 'content-length')) > limit) throw tooLarge(limit)
    const source = request.body as ReadableStream<Uint8Array> | null | undefined
    if (request.bodyUsed === true || source?.locked === true)
      throw streamAlreadyRead(request.fix ?? FETCH_FIX)
    if (source != null && typeof source.getReader !== 'function')
      throw new ConfigError(
        "readFetchBody reads a Fetch Request's body stream; readBody() reads the others.",
      )
    let taken = 0
    try {
      const body =
        source == null
          ? new Uint8Array(0)
          : await readStream(source, limit, deadline, (bytes) => {
              if (!budget.take(bytes)) throw serverBusy(budget.max)
              taken += bytes
            })
      if (body === undefined) throw tooLarge(limit)
      delivery.body = body
    } finally {
      budget.give(taken)
    }
    return next()
  }
}
