import type { DeliveryLedger } from '../ledger/ledger.js'
import type { catchUpWith } from './handler-source.js'

// How a ledger's catch-up is found: `createDeliveryLedger` (`ledger.ts` here) notes, for each
// ledger it makes, how to load catch-up; the webhook handler's `catchUp()` looks it up. The
// handler imports this module alone, so a handler without a ledger carries no catch-up, even
// through a bundler that inlines dynamic imports.

/** Loads catch-up (`handler-source.ts`) when first called. */
export type CatchUpLoader = () => Promise<{ catchUpWith: typeof catchUpWith }>

const loaders = new WeakMap<DeliveryLedger, CatchUpLoader>()

/** Notes how catch-up over `ledger` is loaded. */
export function attachCatchUp(ledger: DeliveryLedger, load: CatchUpLoader): void {
  loaders.set(ledger, load)
}

/** How catch-up over `ledger` is loaded; `undefined` for a ledger not made by `createDeliveryLedger`. */
export function catchUpOf(ledger: DeliveryLedger): CatchUpLoader | undefined {
  return loaders.get(ledger)
}
