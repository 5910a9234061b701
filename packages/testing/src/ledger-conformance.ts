import type { LedgerStore } from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { ledgerAlikeKeys } from './ledger-alike-conformance.js'
import { ledgerBodyBounds, ledgerLists, ledgerWrites } from './ledger-entries-conformance.js'
import type { LedgerStoreKitOptions } from './ledger-kit.js'
import {
  ledgerCombinedWrites,
  ledgerHolds,
  ledgerMarkPurges,
  ledgerMarksAndPurges,
} from './ledger-marks-conformance.js'

export type { LedgerStoreKitOptions }

// The battery a `LedgerStore` must pass: compare-and-set writes of entries and resource marks
// (exactly one of many parallel writers wins), fields kept exactly, listing newest first in
// cursor pages that cover every match once, filters, and purges that a stale writer cannot undo.
// Its parts: ledger-entries-conformance.ts and ledger-marks-conformance.ts.

/**
 * Runs the ledger store battery. `createStore` gives a store over an empty (or private)
 * ledger: the kit's entries are tagged at random, and one account per test is its own. It
 * passes `options` on to the store it makes (`maxBodiesPerAccount`).
 *
 * @example
 * ```ts
 * // test/ledger-store.test.ts
 * import { describe, it } from 'vitest'
 * runLedgerStoreConformance(() => new MyLedgerStore(db), { describe, it })
 * ```
 */
export function runLedgerStoreConformance(
  createStore: (options?: LedgerStoreKitOptions) => LedgerStore | Promise<LedgerStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError('runLedgerStoreConformance: pass { describe, it } from your test runner.')
  }
  describe(options.name ?? 'LedgerStore conformance', () => {
    ledgerWrites(createStore, it)
    ledgerLists(createStore, it)
    ledgerMarksAndPurges(createStore, it)
    ledgerMarkPurges(createStore, it)
    ledgerCombinedWrites(createStore, it)
    ledgerBodyBounds(createStore, it)
    ledgerHolds(createStore, it)
    ledgerAlikeKeys(createStore, it)
  })
}
