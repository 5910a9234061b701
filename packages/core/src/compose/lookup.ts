import { ConfigError } from '../errors/errors.js'
import { SecretIdentities, type SecretLookup } from '../webhooks/secrets.js'
import { type HeaderNames, signedHeaders, verifySigned } from '../webhooks/verify.js'
import { needs, type WebhookPart } from './path.js'
import { afterVerifying, headerNames } from './signature.js'

// The part that verifies with a secret looked up by the delivery's webhook id (the app keeps
// several webhooks' secrets). Deliveries are deduplicated per secret: the dedupe key is the
// payload id under the identity of the webhook's current secret, so two webhooks' payload ids
// never collide and a retry signed with the other secret of a rotation is the same delivery.

/**
 * Verifies the signature over the body (after `readBody()`) with the secrets `lookup` gives
 * for the webhook id: 401 `secret_unknown` when it gives none.
 */
export function checkSignatureByLookup(lookup: SecretLookup, names?: HeaderNames): WebhookPart {
  if (typeof lookup !== 'function')
    throw new ConfigError(
      'checkSignatureByLookup: lookup must be a function (webhookId) => secret or secrets.',
    )
  const headers = headerNames(names)
  const identities = new SecretIdentities()
  return (delivery, next) => {
    const body = needs(delivery, 'body', 'checkSignatureByLookup', 'readBody')
    const signed = signedHeaders(
      delivery.request.headers,
      headers.signatureHeader,
      headers.webhookIdHeader,
    )
    delivery.webhookId = signed.webhookId
    const verifying = verifySigned(body, signed, lookup, undefined, headers)
    return afterVerifying(verifying, async ({ secretIndex, secrets }) => {
      delivery.secretIndex = secretIndex
      // Keyed by the first secret tried (the webhook's current one), as the preset does.
      delivery.identity = await identities.of(secrets[0]!)
      return next()
    })
  }
}
