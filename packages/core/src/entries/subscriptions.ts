// @scheduling-kit/core/subscriptions: each connected account's own webhook: ensure, remove, rotate, reconcile. The root re-exports it whole.
// Every name here is pinned by test/package/exports.test.ts.

export type { WebhookOwner } from '../subscriptions/lookup.js'
export type {
  EnsureResult,
  RemoveResult,
  RotateResult,
  WebhookSubscriptions,
  WebhookSubscriptionsOptions,
} from '../subscriptions/options.js'
export type {
  ReconcileAccount,
  ReconcileReport,
  SweepReport,
} from '../subscriptions/reports.js'
export {
  MemorySubscriptionStore,
  type MemorySubscriptionStoreOptions,
  type StoredSubscription,
  type SubscribedWebhook,
  type SubscriptionRecord,
  type SubscriptionStore,
} from '../subscriptions/store.js'
export { createWebhookSubscriptions } from '../subscriptions/subscriptions.js'
export type { LedgerOfDeliveries, SweepOptions } from '../subscriptions/sweep-options.js'
export type { RateLimits } from '../sweep/rate.js'
export { RateCap, type RateCapOptions } from '../sweep/rate-cap.js'
export type { RateCapStore, RateTurn } from '../sweep/rate-store.js'
export {
  type HeldRetry,
  isRetryStore,
  type RetryHold,
  type RetryStore,
} from '../sweep/retries.js'
export type { PhaseRange } from '../sweep/schedule.js'
export type { StepOptions } from '../sweep/step.js'
export { MemorySweepStore, type SweepCheckpoint, type SweepStore } from '../sweep/store.js'
