import type { HeadersInput } from '../http/headers.js'
import { readBody } from './body/streams.js'
import { DEFAULT_BODY_LIMIT } from './defaults.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import { assertSecretSource, LOOKUP_HINT, type SecretSource } from './secrets.js'
import type { RawBody } from './signature.js'
import { type HeaderNames, verifyRequest } from './verify.js'

export interface ConstructEventOptions extends HeaderNames {
  /** The raw body: the exact bytes received, or the string they decode to. */
  body: RawBody
  /** The request headers (a Fetch `Headers` or Node's header record). */
  headers: HeadersInput
  /** The signing secret, several while rotating, or a lookup by webhook id. */
  secret: SecretSource
  /** Largest body accepted, in bytes. Default 1 MiB. */
  bodyLimit?: number
}

/**
 * Verifies a webhook request and parses its body, for apps without an adapter. Throws a
 * `WebhookError` whose `status` is the answer to send.
 *
 * @example
 * ```ts
 * try {
 *   const event = await constructEvent({ body: rawBody, headers, secret: process.env.SCHEDULING_SECRET! })
 * } catch (error) {
 *   if (isWebhookError(error)) return new Response(JSON.stringify(error.toJSON()), { status: error.status })
 *   throw error
 * }
 * ```
 */
export async function constructEvent(options: ConstructEventOptions): Promise<AnyWebhookEvent> {
  assertSecretSource(options.secret, 'constructEvent', LOOKUP_HINT)
  const body = await readBody(options.body, options.bodyLimit ?? DEFAULT_BODY_LIMIT)
  await verifyRequest(body, options.headers, options.secret, options)
  return parseEnvelope(body)
}
