import { serverText, WebhookError } from '../errors/errors.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import type { Logger } from '../log.js'
import type { WebhookOwner } from '../subscriptions/lookup.js'
import { isThenable } from '../thenable.js'
import {
  type BodySource,
  bodyAlreadyRead,
  bodyChanged,
  declaresOtherCharset,
  isFaithfulText,
  serverBusy,
  textNotFaithful,
  tooLarge,
} from './body.js'
import type { WebhookContext } from './context.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import type { Settings, WebhookErrorContext } from './options.js'
import { isEventReadable, readBody, readEvents } from './read.js'
import { MAX_WEBHOOK_ID, resolveSecrets } from './secrets.js'
import { signedHeaders, verifiedIndex } from './verify.js'

/** A request in plain data, as an adapter gives it. */
export interface WebhookRequest {
  method: string
  /** Path (a query string is ignored), relative to where the handler is mounted. */
  path: string
  headers: HeadersInput
  /** The raw body or a stream of it. An object means a body parser got there first. */
  body: BodySource | object
  /**
   * How to fix, on the adapter's framework, a body something read or parsed before the handler:
   * the sentence `body_parsed` errors end with.
   */
  fix?: string
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
  /** A late delivery to a webhook of an account this app removed: answered 200, no handler runs. */
  removed?: true
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
  const { method } = request
  if (method !== 'POST' && method.toUpperCase() !== 'POST') {
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
  const { signature, webhookId } = signedHeaders(
    request.headers,
    settings.signatureHeader,
    settings.webhookIdHeader,
  )
  state.webhookId = webhookId
  const read = bytesOf(request, declared, settings)
  const body = read instanceof Uint8Array ? read : await read
  if (settings.subscriptions !== undefined) {
    const found = ownerOf(webhookId, settings)
    return forAccount(
      isThenable(found) ? await found : found,
      body,
      signature,
      webhookId!,
      settings,
      request.headers,
      state,
    )
  }
  const secrets =
    settings.fixedSecrets ??
    (await resolveSecrets(settings.secret, webhookId, settings.webhookIdHeader))
  const verified = verifiedIndex(body, signature, secrets, settings.signatureHeader)
  const secretIndex = isThenable(verified) ? await verified : verified
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

/**
 * The dedupe key of a connected account's delivery: the account and the payload id, so one
 * occurrence sent to two webhooks of the account (during a rotation) runs its handlers once,
 * and two accounts that both receive one payload id each run theirs. Length-prefixed: no
 * account key can make two pairs collide.
 */
export const accountKey = (account: string, payloadId: string) =>
  `account:${account.length}:${account}:${payloadId}`

/** What a webhook id looks like: printable ASCII without spaces (a character class: linear). */
const WEBHOOK_ID = /^[\x21-\x7e]+$/

/**
 * The connected account and secret of the webhook a delivery names (option `subscriptions`);
 * synchronous when the lookup answers from its cache.
 */
function ownerOf(
  webhookId: string | undefined,
  settings: Settings,
): WebhookOwner | undefined | Promise<WebhookOwner | undefined> {
  const header = settings.webhookIdHeader
  if (webhookId === undefined || webhookId === '') {
    throw new WebhookError(
      'secret_unknown',
      `This request has no ${header} header: with subscriptions, the secret is the one of the webhook it names.`,
    )
  }
  // Only what a webhook id can be reaches a store: printable ASCII, no space, bounded.
  if (webhookId.length > MAX_WEBHOOK_ID || !WEBHOOK_ID.test(webhookId)) {
    throw new WebhookError(
      'secret_unknown',
      `The ${header} header is no webhook id (printable ASCII without spaces, at most ${MAX_WEBHOOK_ID} characters); no secret was looked up.`,
    )
  }
  return settings.subscriptions!.lookup(webhookId)
}

/**
 * Verifies a delivery with the secret of the connected account's webhook it names, and tells
 * whose it is. The webhook id is unsigned text, but only the secret stored for that webhook
 * verifies it: a delivery signed with one account's secret and naming another's webhook fails.
 * A promise only when Web Crypto verifies.
 */
function forAccount(
  owner: WebhookOwner | undefined,
  body: Uint8Array,
  signature: string,
  webhookId: string,
  settings: Settings,
  headers: HeadersInput,
  state: WebhookErrorContext,
): Received | Promise<Received> {
  if (owner === undefined) {
    throw new WebhookError(
      'secret_unknown',
      `No connected account has webhook "${serverText(webhookId, 64)}": this app never created it, or removed it longer ago than the grace period.`,
    )
  }
  const verified = verifiedIndex(body, signature, [owner.secret], settings.signatureHeader)
  const accept = (): Received => {
    const event = parseEnvelope(body)
    state.event = event
    const context: WebhookContext = { webhookId, secretIndex: 0, headers, account: owner.account }
    const received: Received = { event, context, key: accountKey(owner.account, event.id) }
    if (!owner.handle) received.removed = true
    return received
  }
  return isThenable(verified) ? verified.then(accept) : accept()
}
