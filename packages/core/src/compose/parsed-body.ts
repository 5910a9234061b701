import { WebhookError } from '../errors/errors.js'
import { getHeader } from '../http/headers.js'
import { isParsedValue, serializedBody } from '../webhooks/body/parsed.js'
import { parsedBodyError } from '../webhooks/body/refusals.js'
import { checkRequestLine } from '../webhooks/request.js'
import { type BodyLimitOptions, bodyLimits } from './body.js'
import type { WebhookPart } from './path.js'

// The part for an app whose JSON parser runs first: the value it left is verified by its compact
// serialization (what the service sends), and a signature that does not match that is told as
// the body having been parsed (500 `body_parsed`, with the fix), never as a forged one.

/**
 * Takes the value a JSON body parser left as the body; put it before `readBody()`. A signature
 * that does not match its serialization is answered 500 `body_parsed` with the fix.
 */
export function acceptParsedBody(options?: Pick<BodyLimitOptions, 'bodyLimit'>): WebhookPart {
  const { limit } = bodyLimits(options, 'acceptParsedBody')
  return (delivery, next) => {
    const { request } = delivery
    if (request.bodyUsed === true || !isParsedValue(request.body)) return next()
    checkRequestLine(request, delivery.path)
    delivery.body = serializedBody(
      request.body,
      {
        declared: Number(getHeader(request.headers, 'content-length')),
        contentType: getHeader(request.headers, 'content-type'),
      },
      limit,
      request.fix,
    )
    // A signature that does not match the serialization: the bytes were parsed, not forged.
    return next().catch((error: unknown) => {
      throw error instanceof WebhookError && error.code === 'signature_invalid'
        ? parsedBodyError(request.fix)
        : error
    })
  }
}
