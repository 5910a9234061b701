import { type DedupeStore, MemoryDedupeStore } from '../claims/dedupe.js'
import { ClaimRecord } from '../claims/record.js'
import { ConfigError } from '../errors/errors.js'
import { HANDLER_CLAIM } from '../webhooks/defaults.js'
import type { WebhookPart } from './path.js'
import { recordIn } from './record.js'

// The dedupe claim as a part: the service delivers at least once, so a retry of a delivery
// handled already must not run again. The claim is held while the parts after it run (renewed
// with a store that can), completed when they answered, released when they threw.

/**
 * Runs the parts after it once per delivery (after `parseEvent()`): `store` a shared store
 * (Redis, PostgreSQL) for several instances, else an in-memory one of this process.
 */
export function dedupe(store: DedupeStore = new MemoryDedupeStore()): WebhookPart {
  if (typeof store?.claim !== 'function')
    throw new ConfigError('dedupe: store must be a dedupe store (claim, complete, release).')
  const plain = recordIn(new ClaimRecord(store, HANDLER_CLAIM))
  // Observed (`traced()` before it): each claim in a span under the delivery's.
  return (delivery, next) =>
    delivery.watch === undefined
      ? plain(delivery, next)
      : recordIn(new ClaimRecord(delivery.watch.dedupe(store), HANDLER_CLAIM))(delivery, next)
}
