import { accountKey, identityKey } from '../claims/keys.js'
import { utf8 } from '../platform/bytes.js'
import { parseEnvelope } from '../webhooks/envelope.js'
import { contextOf, needs, type WebhookPart } from './path.js'

// The part that parses: the verified bytes as the event's envelope, and the delivery's dedupe
// key, the payload id, scoped by the account or the secret's identity when there is one.

/** Parses the verified body (after the signature part): 400 for a body that is no event. */
export function parseEvent(): WebhookPart {
  return (delivery, next) => {
    // Never an unverified body: the signature part comes first.
    needs(delivery, 'secretIndex', 'parseEvent', 'checkSignature')
    const text = utf8(needs(delivery, 'body', 'parseEvent', 'readBody'))
    const event = parseEnvelope(text)
    delivery.text = text
    delivery.event = event
    delivery.key =
      delivery.account !== undefined
        ? accountKey(delivery.account, event.id)
        : delivery.identity !== undefined
          ? identityKey(delivery.identity, event.id)
          : event.id
    delivery.watch?.described(event, contextOf(delivery))
    return next()
  }
}
