import { wholeNumber } from '../validate.js'
import { ageOf, tooOld } from '../webhooks/old-body.js'
import { needs, type WebhookPart } from './path.js'

// The age check as a part. The service signs no timestamp: past the window in which the record
// still knows a delivery (the dedupe store's time, the ledger's retention), a captured body sent
// again looks like a first delivery. The signed `occurred_at` is the one time a sender cannot
// change: a body older than `maxAgeMs` is answered 200 `too_old` and runs nothing.

/** Refuses deliveries whose `occurred_at` is older than `maxAgeMs` (after `parseEvent()`). */
export function refuseOlderThan(maxAgeMs: number, clock: () => number = Date.now): WebhookPart {
  // Required: NaN in its place is refused with the option's name.
  wholeNumber('refuseOlderThan', 'maxAgeMs', maxAgeMs ?? Number.NaN, 0, { unit: 'milliseconds' })
  return (delivery, next) => {
    const event = needs(delivery, 'event', 'refuseOlderThan', 'parseEvent')
    const age = ageOf(event, maxAgeMs, clock())
    if (age !== undefined) throw tooOld(event, age)
    return next()
  }
}
