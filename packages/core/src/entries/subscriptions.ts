// @scheduling-kit/core/subscriptions: each connected account's own webhook: ensure, remove, rotate, reconcile. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export type { WebhookOwner } from '../subscriptions/lookup.js'
export type {
  EnsureResult,
  ReconcileAccount,
  ReconcileReport,
  RemoveResult,
  RotateResult,
  WebhookSubscriptions,
  WebhookSubscriptionsOptions,
} from '../subscriptions/options.js'
export {
  MemorySubscriptionStore,
  type MemorySubscriptionStoreOptions,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
  type SubscriptionStore,
} from '../subscriptions/store.js'
export { createWebhookSubscriptions } from '../subscriptions/subscriptions.js'
