import type { DeliveryOutcome, DeliveryRecord, VerifiedDelivery } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import { isThenable } from '../thenable.js'
import { notRun, received, type WebhookResponse } from '../webhooks/answer.js'
import { inProgress } from '../webhooks/deliver.js'
import { needs, type WebhookDelivery, type WebhookPart } from './path.js'

// The part that records a delivery: a dedupe claim (`dedupe.ts`) or the delivery ledger, the one
// record every path of the preset goes through too. The parts after it run under the record's
// claim, once per delivery; a retry of one handled already is answered 200 without running,
// one still being handled 409. With a queue as the last part, the record hands it off.

function verifiedOf(delivery: WebhookDelivery): VerifiedDelivery {
  const envelope = needs(delivery, 'event', 'the record', 'parseEvent')
  return {
    envelope,
    key: delivery.key!,
    webhookId: delivery.webhookId,
    account: delivery.account,
    text: delivery.text!,
  }
}

/**
 * Runs the parts after it under `record` (a delivery ledger, or `dedupe(store)`'s claim), after
 * `parseEvent()`. Their answer is the delivery's when it ran.
 */
export function recordIn(record: DeliveryRecord): WebhookPart {
  if (typeof record?.deliver !== 'function' || typeof record.handOff !== 'function')
    throw new ConfigError('recordIn: record must be a delivery ledger or a dedupe claim.')
  return (delivery, next) => {
    const verified = verifiedOf(delivery)
    let answer: Promise<WebhookResponse> | undefined
    const run = (extra?: object) => {
      if (extra !== undefined) delivery.extra = extra
      answer = next()
      return answer
    }
    const outcome = delivery.queued ? record.handOff(verified, run) : record.deliver(verified, run)
    const settle = (came: DeliveryOutcome): WebhookResponse | Promise<WebhookResponse> => {
      if (came === 'busy') throw inProgress(verified.envelope.id)
      if (came === 'ran') return answer ?? received()
      return notRun(came)
    }
    return isThenable(outcome) ? outcome.then(settle) : settle(outcome)
  }
}
