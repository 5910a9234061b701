import { accountKey, identityKey } from '../claims/keys.js'
import { serverText, WebhookError } from '../errors/errors.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import { utf8 } from '../platform/bytes.js'
import type { WebhookOwner } from '../subscriptions/lookup.js'
import { isThenable } from '../thenable.js'
import { isParsedValue, serializedBody, verifiedAsParsed } from './body/parsed.js'
import { requestBytes } from './body/read.js'
import { tooLarge } from './body/refusals.js'
import type { WebhookContext } from './context.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import type { SubscriptionLookup, WebhookErrorContext } from './options.js'
import { checkRequestLine, type WebhookRequest } from './request.js'
import { MAX_WEBHOOK_ID } from './secrets.js'
import type { Settings } from './settings.js'
import { signedHeaders, verifySigned } from './verify.js'

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
  /** The verified body as text, decoded once (kept by the ledger for replay). */
  text: string
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
  checkRequestLine(request, settings.path)
  const declared = Number(getHeader(request.headers, 'content-length'))
  if (declared > settings.limit) throw tooLarge(settings.limit)
  const signed = signedHeaders(request.headers, settings.signatureHeader, settings.webhookIdHeader)
  const { webhookId } = signed
  state.webhookId = webhookId
  // A value the app's JSON parser left is verified by its compact serialization (parsed.ts).
  const raw = request.body
  const parsed = request.bodyUsed !== true && isParsedValue(raw)
  const read = parsed
    ? serializedBody(
        raw as object,
        { declared, contentType: getHeader(request.headers, 'content-type') },
        settings.limit,
        request.fix,
      )
    : requestBytes(request, declared, settings)
  const body = read instanceof Uint8Array ? read : await read
  const fix = parsed ? { fix: request.fix } : undefined
  if (settings.subscriptions !== undefined) {
    const found = ownerOf(webhookId, settings.subscriptions, settings.webhookIdHeader)
    return forAccount(isThenable(found) ? await found : found, body, signed, settings, {
      headers: request.headers,
      state,
      parsed: fix,
    })
  }
  const verified = verifySigned(body, signed, settings.secret, settings.fixedSecrets, settings)
  const verifying = fix === undefined ? verified : verifiedAsParsed(verified, fix.fix)
  const { secretIndex, secrets } = isThenable(verifying) ? await verifying : verifying
  const text = utf8(body)
  const event = parseEnvelope(text)
  state.event = event
  const context = { webhookId, secretIndex, headers: request.headers }
  if (settings.identities === undefined) return { event, context, key: event.id, text }
  // Keyed by the first secret of those that were tried (the webhook's current one, as a
  // lookup answers `[new, old]` during a rotation), not by the one that matched: a retry of
  // one delivery signed with the other secret is the same delivery.
  const identity = settings.identities.of(secrets[0]!)
  return {
    event,
    context,
    key: identityKey(typeof identity === 'string' ? identity : await identity, event.id),
    text,
  }
}

/** What a webhook id looks like: printable ASCII without spaces (a character class: linear). */
const WEBHOOK_ID = /^[\x21-\x7e]+$/

/**
 * The connected account and secret of the webhook a delivery names (option `subscriptions`);
 * synchronous when the lookup answers from its cache.
 */
export function ownerOf(
  webhookId: string | undefined,
  subscriptions: SubscriptionLookup,
  header: string,
): WebhookOwner | undefined | Promise<WebhookOwner | undefined> {
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
  return subscriptions.lookup(webhookId)
}

/** `secret_unknown` for a webhook id no connected account has. */
export function noOwner(webhookId: string): WebhookError {
  return new WebhookError(
    'secret_unknown',
    `No connected account has webhook "${serverText(webhookId, 64)}": this app never created it, or removed it longer ago than the grace period.`,
  )
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
  signed: { signature: string; webhookId: string | undefined },
  settings: Settings,
  request: {
    headers: HeadersInput
    state: WebhookErrorContext
    /** Set when the body is a parsed value's serialization, with the framework's fix. */
    parsed: { fix: string | undefined } | undefined
  },
): Received | Promise<Received> {
  const { headers, state, parsed } = request
  const webhookId = signed.webhookId!
  if (owner === undefined) throw noOwner(webhookId)
  const checked = verifySigned(body, signed, owner.secret, [owner.secret], settings)
  const verified = parsed === undefined ? checked : verifiedAsParsed(checked, parsed.fix)
  const accept = (): Received => {
    const text = utf8(body)
    const event = parseEnvelope(text)
    state.event = event
    const context: WebhookContext = { webhookId, secretIndex: 0, headers, account: owner.account }
    const received: Received = {
      event,
      context,
      key: accountKey(owner.account, event.id),
      text,
    }
    if (!owner.handle) received.removed = true
    return received
  }
  return isThenable(verified) ? verified.then(accept) : accept()
}
