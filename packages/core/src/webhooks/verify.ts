import { defaultProvider } from '../crypto/default.js'
import { WebhookError } from '../errors/errors.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import { isThenable } from '../thenable.js'
import { DEFAULT_SIGNATURE_HEADER, DEFAULT_WEBHOOK_ID_HEADER } from './defaults.js'
import { resolveSecrets, type SecretSource } from './secrets.js'
import { isBlankHeader, MAX_SIGNATURE_HEADER, match } from './signature.js'

export interface HeaderNames {
  /** Header carrying `sha256=<hex>`. Default `x-service-signature`. */
  signatureHeader?: string
  /** Header carrying the webhook id `wh_<id>`. Default `x-service-webhook-id`. */
  webhookIdHeader?: string
}

export interface Verified {
  /** The `x-service-webhook-id` header, when sent. */
  webhookId: string | undefined
  /** Which of the secrets matched (0 unless rotating). */
  secretIndex: number
}

// The one verification pipeline, shared by the webhook handler (`receive`) and
// `constructEvent` (`verifyRequest`): read the signed headers, verify the body against the
// secrets (`verifySigned`), refuse with the code that says what to fix.

/** The signature header (or `signature_missing`) and the webhook id header of a request. */
export function signedHeaders(
  headers: HeadersInput,
  signatureHeader: string,
  webhookIdHeader: string,
): { signature: string; webhookId: string | undefined } {
  return {
    signature: requireSignature(headers, signatureHeader),
    webhookId: getHeader(headers, webhookIdHeader),
  }
}

/**
 * The index of the secret the signature was made with, or the refusal (`secret_whitespace`,
 * `signature_invalid`). A promise only when Web Crypto verifies.
 */
export function verifiedIndex(
  body: Uint8Array,
  signature: string,
  secrets: readonly string[],
  signatureHeader: string,
): number | Promise<number> {
  const matched = match(defaultProvider, body, signature, secrets)
  const settle = (index: number) =>
    index >= 0 ? index : rejectSignature(body, signature, secrets, signatureHeader)
  return isThenable(matched) ? matched.then(settle) : settle(matched)
}

/** Reads the signature header or throws `signature_missing`. */
function requireSignature(headers: HeadersInput, name: string): string {
  const header = getHeader(headers, name)
  // A header longer than any signature is not blank: it is refused, unread, as no signature.
  if (header === undefined || (header.length <= MAX_SIGNATURE_HEADER && isBlankHeader(header))) {
    throw new WebhookError(
      'signature_missing',
      `The request has no ${name} header: is it from the service (which signs every webhook), ` +
        'or does a proxy drop the header? (Option signatureHeader names another.)',
    )
  }
  return header
}

/** After a mismatch: throws `secret_whitespace` when trimming the secret would match, else `signature_invalid`. */
async function rejectSignature(
  body: Uint8Array,
  signature: string,
  secrets: readonly string[],
  signatureHeader: string,
): Promise<never> {
  // A secret copied with a trailing newline is the most common mistake. Only a sender who
  // signed with the trimmed secret (who knows it) can ever see this hint.
  const padded = secrets.some((s) => s !== s.trim())
  if (
    padded &&
    (await match(
      defaultProvider,
      body,
      signature,
      secrets.map((s) => s.trim()),
    )) >= 0
  ) {
    throw new WebhookError(
      'secret_whitespace',
      'The signature matches the secret without its leading or trailing white space (often a ' +
        'newline from an .env file): trim the secret.',
    )
  }
  throw new WebhookError(
    'signature_invalid',
    `The ${signatureHeader} header does not match the body. Check that the secret is this ` +
      "webhook's signing secret and that no body parser changed the body before verification.",
  )
}

/** The secrets a delivery was verified against, and which of them matched. */
export interface Verification extends Verified {
  secrets: readonly string[]
}

/**
 * The one verification composition, shared by the webhook handler and `verifyRequest`: the
 * secrets for the request's webhook id (`fixed` when they do not depend on it), then the
 * signature over the body. Synchronous when the secrets are at hand and node:crypto verifies:
 * each needless await costs the handler a turn of the microtask queue.
 */
export function verifySigned(
  body: Uint8Array,
  signed: { signature: string; webhookId: string | undefined },
  source: SecretSource,
  fixed: readonly string[] | undefined,
  names: Required<HeaderNames>,
): Verification | Promise<Verification> {
  const { signature, webhookId } = signed
  const check = (secrets: readonly string[]): Verification | Promise<Verification> => {
    const index = verifiedIndex(body, signature, secrets, names.signatureHeader)
    return isThenable(index)
      ? index.then((secretIndex) => ({ webhookId, secretIndex, secrets }))
      : { webhookId, secretIndex: index, secrets }
  }
  return fixed !== undefined
    ? check(fixed)
    : resolveSecrets(source, webhookId, names.webhookIdHeader).then(check)
}

/**
 * Verifies a request's signature against its raw body. Throws `signature_missing`,
 * `secret_unknown`, `secret_whitespace` or `signature_invalid`.
 */
export async function verifyRequest(
  body: Uint8Array,
  headers: HeadersInput,
  secret: SecretSource,
  names: HeaderNames = {},
): Promise<Verified> {
  const resolved = {
    signatureHeader: names.signatureHeader ?? DEFAULT_SIGNATURE_HEADER,
    webhookIdHeader: names.webhookIdHeader ?? DEFAULT_WEBHOOK_ID_HEADER,
  }
  const signed = signedHeaders(headers, resolved.signatureHeader, resolved.webhookIdHeader)
  const { webhookId, secretIndex } = await verifySigned(body, signed, secret, undefined, resolved)
  return { webhookId, secretIndex }
}
