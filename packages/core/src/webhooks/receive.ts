import { defaultProvider } from '../crypto/default.js'
import { WebhookError } from '../errors.js'
import { getHeader, type HeadersInput } from '../headers.js'
import type { Logger } from '../log.js'
import { isThenable } from '../thenable.js'
import {
  type BodySource,
  bodyAlreadyRead,
  bodyChanged,
  declaresOtherCharset,
  type FrameworkName,
  isFaithfulText,
  readBody,
  serverBusy,
  textNotFaithful,
  tooLarge,
} from './body.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import type { Settings, WebhookErrorContext } from './options.js'
import type { WebhookContext } from './registry.js'
import { resolveSecrets } from './secrets.js'
import { match } from './signature.js'
import { rejectSignature, requireSignature } from './verify.js'

/** A request in plain data, as an adapter gives it. */
export interface WebhookRequest {
  method: string
  /** Path (a query string is ignored), relative to where the handler is mounted. */
  path: string
  headers: HeadersInput
  /** The raw body or a stream of it. An object means a body parser got there first. */
  body: BodySource | object
  /** The adapter's framework, for advice in error messages. */
  framework?: FrameworkName
  /** The framework says the body was already read (a Fetch `Request`'s `bodyUsed`). */
  bodyUsed?: boolean
  /** The framework's logger (Fastify's `request.log`), used when no `logger` option is given. */
  logger?: Logger
  /**
   * The adapter hands 5xx answers' errors to the framework's error path (Express's `next(err)`),
   * which logs them: they are not logged here too.
   */
  errorsToFramework?: boolean
}

/** A delivery whose signature is verified and whose envelope is parsed. */
export interface Received {
  event: AnyWebhookEvent
  context: WebhookContext
  /**
   * The dedupe key: what the signature proved, never text the sender chose. The payload id,
   * under the identity of the secret that verified it when secrets are looked up per request.
   */
  key: string
}

/** The longest `Content-Type` read; a longer one is not the service's and is refused unread. */
const MAX_CONTENT_TYPE = 256

function isJsonContentType(value: string | undefined): boolean {
  if (value === undefined || value.length > MAX_CONTENT_TYPE) return false
  if (value === 'application/json') return true
  const type = value.split(';', 1)[0]!.trim().toLowerCase()
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))
}

/** Refuses, before any byte of the body is read, what the service never sends. */
function checkRequestLine(request: WebhookRequest, settings: Settings): void {
  if (request.method.toUpperCase() !== 'POST') {
    throw new WebhookError('method_not_allowed', `Only POST is accepted on ${settings.path}.`)
  }
  if (!isJsonContentType(getHeader(request.headers, 'content-type'))) {
    throw new WebhookError(
      'unsupported_media_type',
      'Webhooks are sent as application/json; this request has another content type.',
    )
  }
  const encoding = getHeader(request.headers, 'content-encoding')
  if (
    encoding !== undefined &&
    (encoding.length > MAX_CONTENT_TYPE || encoding.trim().toLowerCase() !== 'identity')
  ) {
    // The signature covers the bytes sent; a decoded body is not them.
    throw new WebhookError(
      'unsupported_media_type',
      'Webhooks are sent without a Content-Encoding; the signature covers the bytes as sent.',
    )
  }
}

/** The body's bytes within the limits; bytes already at hand are used as they are. */
function bytesOf(
  request: WebhookRequest,
  declared: number,
  settings: Settings,
): Uint8Array | Promise<Uint8Array> {
  const raw = request.body
  if (request.bodyUsed === true) throw bodyAlreadyRead(request.framework)
  // Text a parser decoded must be a faithful copy of the bytes, whatever its length.
  if (
    typeof raw === 'string' &&
    (!isFaithfulText(raw) || declaresOtherCharset(getHeader(request.headers, 'content-type')))
  ) {
    throw textNotFaithful(request.framework)
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
      throw bodyChanged(declared, body.length, request.framework)
    }
    return body
  }
  const { budget } = settings
  if (inMemory || !(declared >= 0)) {
    // Bytes at hand are held already; a stream of unknown length takes its chunks as they come.
    return readBody(
      raw,
      settings.limit,
      request.framework,
      settings.bodyTimeoutMs,
      inMemory ? undefined : budget,
    ).then(check)
  }
  // A declared length is taken whole before the first byte is read, and given back at the end.
  if (!budget.take(declared)) throw serverBusy(budget.max)
  return readBody(raw, settings.limit, request.framework, settings.bodyTimeoutMs).then(
    (body) => {
      budget.give(declared)
      return body
    },
    (error: unknown) => {
      budget.give(declared)
      throw error
    },
  )
}

/**
 * Receives one delivery: checks the request, reads the body within the limits, verifies the
 * signature over its bytes and parses the envelope. Throws a `WebhookError` for what it
 * refuses; `state` learns the webhook id and the event as soon as they are known. Awaits only
 * what is really asynchronous (a stream, a secret lookup, Web Crypto): each needless await
 * costs a turn of the microtask queue.
 */
export async function receive(
  request: WebhookRequest,
  settings: Settings,
  state: WebhookErrorContext,
): Promise<Received> {
  checkRequestLine(request, settings)
  const declared = Number(getHeader(request.headers, 'content-length'))
  if (declared > settings.limit) throw tooLarge(settings.limit)
  const signature = requireSignature(request.headers, settings.signatureHeader)
  const webhookId = getHeader(request.headers, settings.webhookIdHeader)
  state.webhookId = webhookId
  const read = bytesOf(request, declared, settings)
  const body = read instanceof Uint8Array ? read : await read
  const secrets =
    settings.fixedSecrets ??
    (await resolveSecrets(settings.secret, webhookId, settings.webhookIdHeader))
  const matched = match(defaultProvider, body, signature, secrets)
  const secretIndex = isThenable(matched) ? await matched : matched
  if (secretIndex < 0) await rejectSignature(body, signature, secrets, settings.signatureHeader)
  const event = parseEnvelope(body)
  state.event = event
  const context = { webhookId, secretIndex, headers: request.headers }
  if (settings.identities === undefined) return { event, context, key: event.id }
  const identity = settings.identities.of(secrets[secretIndex]!)
  return {
    event,
    context,
    key: `${typeof identity === 'string' ? identity : await identity}:${event.id}`,
  }
}
