import { ConfigError } from '../errors/errors.js'
import { isThenable } from '../thenable.js'
import { DEFAULT_SIGNATURE_HEADER, DEFAULT_WEBHOOK_ID_HEADER } from '../webhooks/defaults.js'
import { assertSecretSource } from '../webhooks/secrets.js'
import { type HeaderNames, signedHeaders, verifiedIndex } from '../webhooks/verify.js'
import { needs, type WebhookPart } from './path.js'

// The part that verifies with the app's secret (several while rotating): the signature header
// over the body's bytes, by the one verification the preset uses. A secret looked up per
// webhook is `checkSignatureByLookup` (`lookup.ts`), the accounts' own `checkAccountSignature`.

/** The signature headers' names, with their defaults. */
export function headerNames(names: HeaderNames | undefined): Required<HeaderNames> {
  return {
    signatureHeader: names?.signatureHeader ?? DEFAULT_SIGNATURE_HEADER,
    webhookIdHeader: names?.webhookIdHeader ?? DEFAULT_WEBHOOK_ID_HEADER,
  }
}

/** Runs `then` once verified: at once when the verification was synchronous. */
export function afterVerifying<T, R>(
  verifying: T | Promise<T>,
  then: (verified: T) => R | Promise<R>,
): R | Promise<R> {
  return isThenable(verifying) ? verifying.then(then) : then(verifying)
}

/**
 * Verifies the signature over the body (after `readBody()`) with `secret`, or any of several
 * while rotating: 401 `signature_missing`, `secret_whitespace` or `signature_invalid`.
 */
export function checkSignature(
  secret: string | readonly string[],
  names?: HeaderNames,
): WebhookPart {
  assertSecretSource(secret, 'checkSignature')
  if (typeof secret === 'function')
    throw new ConfigError(
      'checkSignature: a secret looked up per webhook is checkSignatureByLookup(lookup).',
    )
  const secrets = typeof secret === 'string' ? [secret] : [...secret]
  const headers = headerNames(names)
  return (delivery, next) => {
    const body = needs(delivery, 'body', 'checkSignature', 'readBody')
    const { signature, webhookId } = signedHeaders(
      delivery.request.headers,
      headers.signatureHeader,
      headers.webhookIdHeader,
    )
    delivery.webhookId = webhookId
    const index = verifiedIndex(body, signature, secrets, headers.signatureHeader)
    return afterVerifying(index, (secretIndex) => {
      delivery.secretIndex = secretIndex
      return next()
    })
  }
}
