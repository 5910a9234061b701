export type {
  AccountGrants,
  ApiCounters,
  ApiFailure,
  AuthCounters,
  AuthFailure,
  AuthorizeMode,
  AuthService,
  TokenRequest,
  TokenResponseBody,
} from '@scheduling-kit/fake-auth'
export {
  type AppInstance,
  type AppInstanceOptions,
  type InstanceLog,
  startAppInstance,
} from './connection-app.js'
export {
  type ConnectionScenarioOptions,
  runConnectionScenarios,
} from './connection-scenarios.js'
export { type DedupeTiming, runDedupeStoreConformance } from './dedupe-conformance.js'
export { createTestEvent, type TestEventOverrides } from './events.js'
export { completeOAuthFlow, type OAuthFlowOptions } from './flow.js'
export { type LedgerStoreKitOptions, runLedgerStoreConformance } from './ledger-conformance.js'
export { runLedgerScenarios } from './ledger-scenarios.js'
export {
  type ProbedSpan,
  type QueueKit,
  type QueueTraceProbe,
  type QueueUnderTest,
  runWebhookQueueConformance,
} from './queue-conformance.js'
export { type RefreshRaceFaultsOptions, runRefreshRaceFaults } from './race-faults.js'
export type {
  RaceStop,
  RefreshRaceOptions,
  RefreshRaceReport,
  RefreshRaceRound,
} from './race-types.js'
export { type RateCapRaceOptions, type RateCapRaceReport, runRateCapRace } from './rate-race.js'
export {
  type RateCapStoreConformanceOptions,
  type RateField,
  runRateCapStoreConformance,
} from './rate-store-conformance.js'
export {
  type OutageStores,
  type RefreshAheadOutageOptions,
  type RefreshAheadOutageReport,
  runRefreshAheadOutage,
} from './refresh-outage.js'
export { runRefreshRace } from './refresh-race.js'
export { runRetryStoreConformance } from './retry-store-conformance.js'
export { startFakeSchedulingService } from './service.js'
export type { EventsFailure, ListedEvent } from './service-events.js'
export type {
  AppSettings,
  DeliveryAttempt,
  FakeSchedulingService,
  FakeSchedulingServiceOptions,
  TriggerOptions,
  Webhook,
} from './service-types.js'
export {
  type SignedRequestOptions,
  sendTestEvent,
  signedRequest,
  WEBHOOK_USER_AGENT,
} from './sign.js'
export { type SlowLink, type SlowLinkOptions, startSlowLink } from './slow-link.js'
export { runTokenStoreConformance, type StoreConformanceOptions } from './store-conformance.js'
export {
  runSubscriptionStoreConformance,
  type SubscriptionConformanceOptions,
} from './subscription-conformance.js'
export {
  runSweepStoreConformance,
  type SweepStoreConformanceOptions,
} from './sweep-store-conformance.js'
