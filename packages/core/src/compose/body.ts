import { getHeader } from '../http/headers.js'
import { wholeNumber } from '../validate.js'
import { BodyBudget } from '../webhooks/body/budget.js'
import { requestBytes } from '../webhooks/body/read.js'
import { tooLarge } from '../webhooks/body/refusals.js'
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_PENDING_BYTES,
} from '../webhooks/defaults.js'
import { checkRequestLine } from '../webhooks/request.js'
import type { WebhookPart } from './path.js'

// The part that reads a delivery: its request line (POST, JSON, no Content-Encoding), then the
// bytes the signature covers, within the limits, by the one reader the preset handler uses.

/** The limits a body is read within. */
export interface BodyLimitOptions {
  /** The most bytes a body may have. Default 1 MiB. */
  bodyLimit?: number
  /** How long a body may take to arrive once the headers have, in ms. Default 30 s. */
  bodyTimeoutMs?: number
  /** The most bytes held at once by bodies still arriving, across requests. Default 64 MiB. */
  maxPendingBytes?: number
}

/** The limits, checked, with their defaults. */
export function bodyLimits(options: BodyLimitOptions | undefined, who: string) {
  const limit = wholeNumber(who, 'bodyLimit', options?.bodyLimit, DEFAULT_BODY_LIMIT, {
    unit: 'bytes',
  })
  const bodyTimeoutMs = wholeNumber(
    who,
    'bodyTimeoutMs',
    options?.bodyTimeoutMs,
    DEFAULT_BODY_TIMEOUT_MS,
    { unit: 'milliseconds' },
  )
  const pending = wholeNumber(
    who,
    'maxPendingBytes',
    options?.maxPendingBytes,
    Math.max(DEFAULT_MAX_PENDING_BYTES, limit),
    { min: limit, unit: 'bytes' },
  )
  return { limit, bodyTimeoutMs, budget: new BodyBudget(pending) }
}

/**
 * Checks the request line and reads the body's bytes within the limits: 413 past `bodyLimit`,
 * 408 past `bodyTimeoutMs`, 503 past `maxPendingBytes`, 500 `body_parsed` when a body parser
 * took the bytes first (put `acceptParsedBody()` before it to verify what a JSON parser left).
 */
export function readBody(options?: BodyLimitOptions): WebhookPart {
  const limits = bodyLimits(options, 'readBody')
  return (delivery, next) => {
    const { request } = delivery
    checkRequestLine(request, delivery.path)
    if (delivery.body !== undefined) return next()
    const declared = Number(getHeader(request.headers, 'content-length'))
    if (declared > limits.limit) throw tooLarge(limits.limit)
    const read = requestBytes(request, declared, limits)
    if (read instanceof Uint8Array) {
      delivery.body = read
      return next()
    }
    return read.then((body) => {
      delivery.body = body
      return next()
    })
  }
}
