import { DeliveryLedger } from '../ledger/ledger.js'
import type { DeliveryLedgerOptions } from '../ledger/options.js'
import { attachCatchUp } from './loaders.js'

// The delivery ledger as an app makes it: the ledger (`ledger/`) and the way to catch up on it,
// loaded by a dynamic import when the handler's `catchUp()` is first called. It stands here, above
// both, so the ledger imports nothing of catch-up.

/**
 * A delivery ledger: every verified delivery recorded with its outcome, failed ones kept as
 * dead letters past `maxAttempts`, bodies kept (sealed with `cipher`) for replay until
 * `retention.bodyMs`. Give it to `createWebhookHandler({ ledger })` or an adapter's
 * `schedulingWebhooks({ ledger })`; it is then the dedupe record too (one write per delivery).
 *
 * @example
 * ```ts
 * const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
 * app.use(schedulingWebhooks(process.env.SCHEDULING_SECRET!, { ledger }))
 * const { entries } = await ledger.list({ status: 'dead' })
 * ```
 */
export function createDeliveryLedger(options: DeliveryLedgerOptions): DeliveryLedger {
  const ledger = new DeliveryLedger(options)
  attachCatchUp(ledger, () => import('./handler-source.js'))
  return ledger
}
