import { ConfigError, type TokenStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { tokenStoreLeases, tokenStoreVersions } from './token-store-concurrency.js'
import { tokenStoreAlikeKeys, tokenStoreRecords } from './token-store-records.js'

export type { StoreConformanceOptions }

/**
 * The battery a `TokenStore` must pass. Call it from your own test file:
 *
 * ```ts
 * import { describe, it } from 'vitest' // or 'node:test'
 * runTokenStoreConformance(() => new MyStore(db), { describe, it })
 * ```
 *
 * The compare-and-set and lease tests run when the store has those methods; so does a race of
 * three token managers against the fake service, which must refresh exactly once.
 *
 * @example
 * ```ts
 * // test/store.test.ts
 * import { describe, it } from 'vitest'
 * runTokenStoreConformance(() => new MyTokenStore(db), { describe, it })
 * ```
 */
export function runTokenStoreConformance(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError('runTokenStoreConformance: pass { describe, it } from your test runner.')
  }
  tokenStoreRecords(createStore, options)
  tokenStoreAlikeKeys(createStore, options)
  tokenStoreVersions(createStore, options)
  tokenStoreLeases(createStore, options)
}
