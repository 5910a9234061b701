import { ConfigError } from '../errors/errors.js'
import type { WebhookOwner } from '../subscriptions/lookup.js'
import { isThenable } from '../thenable.js'
import { removed } from '../webhooks/answer.js'
import type { SubscriptionLookup } from '../webhooks/options.js'
import { noOwner, ownerOf } from '../webhooks/receive.js'
import type { HeaderNames } from '../webhooks/verify.js'
import { signedHeaders, verifySigned } from '../webhooks/verify.js'
import { needs, type WebhookPart } from './path.js'
import { afterVerifying, headerNames } from './signature.js'

// The part for connected accounts' webhooks: the secret is the one of the webhook the delivery
// names, looked up in the subscriptions; handlers get `context.account`. A late delivery to a
// webhook of an account this app removed is answered 200 and runs nothing.

/**
 * Verifies with the secret of the connected account's webhook the delivery names (after
 * `readBody()`): 401 `secret_unknown` for a webhook this app never created.
 */
export function checkAccountSignature(
  subscriptions: SubscriptionLookup,
  names?: HeaderNames,
): WebhookPart {
  if (typeof subscriptions?.lookup !== 'function')
    throw new ConfigError(
      'checkAccountSignature: subscriptions must be what createWebhookSubscriptions returns.',
    )
  const headers = headerNames(names)
  return (delivery, next) => {
    const body = needs(delivery, 'body', 'checkAccountSignature', 'readBody')
    const signed = signedHeaders(
      delivery.request.headers,
      headers.signatureHeader,
      headers.webhookIdHeader,
    )
    const webhookId = signed.webhookId
    delivery.webhookId = webhookId
    const verify = (owner: WebhookOwner | undefined) => {
      if (owner === undefined) throw noOwner(webhookId!)
      const verifying = verifySigned(body, signed, owner.secret, [owner.secret], headers)
      return afterVerifying(verifying, () => {
        delivery.secretIndex = 0
        delivery.account = owner.account
        return owner.handle ? next() : removed()
      })
    }
    const found = ownerOf(webhookId, subscriptions, headers.webhookIdHeader)
    return isThenable(found) ? found.then(verify) : verify(found)
  }
}
