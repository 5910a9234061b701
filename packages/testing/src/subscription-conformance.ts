import { ConfigError, type SubscriptionStore } from '@scheduling-kit/core'
import type { SubscriptionConformanceOptions } from './subscription-conformance-options.js'
import { subscriptionStoreConcurrency } from './subscription-store-concurrency.js'
import {
  subscriptionStoreAlikeKeys,
  subscriptionStoreIndex,
  subscriptionStoreRecords,
} from './subscription-store-records.js'

export type { SubscriptionConformanceOptions }

/**
 * The battery a `SubscriptionStore` must pass: round trips of every field, compare-and-set on
 * the version, the webhook-id index following each write, deletion, the key listing, leases,
 * and races between many writers (one winner per version, no lost index entry). Ends with
 * eight `createWebhookSubscriptions` instances on the store calling `ensure` for one account at
 * once against the fake service: exactly one remote webhook.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'
 * runSubscriptionStoreConformance(() => new MySubscriptionStore(db), { describe, it })
 * ```
 */
export function runSubscriptionStoreConformance(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError(
      'runSubscriptionStoreConformance: pass { describe, it } from your test runner.',
    )
  }
  subscriptionStoreRecords(createStore, options)
  subscriptionStoreAlikeKeys(createStore, options)
  subscriptionStoreIndex(createStore, options)
  subscriptionStoreConcurrency(createStore, options)
}
