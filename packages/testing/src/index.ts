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
export { type DedupeTiming, runDedupeStoreConformance } from './dedupe-conformance.js'
export { createTestEvent, type TestEventOverrides } from './events.js'
export { completeOAuthFlow, type OAuthFlowOptions } from './flow.js'
export { type RefreshRaceFaultsOptions, runRefreshRaceFaults } from './race-faults.js'
export {
  type RaceStop,
  type RefreshRaceOptions,
  type RefreshRaceReport,
  type RefreshRaceRound,
  runRefreshRace,
} from './refresh-race.js'
export {
  type AppSettings,
  type DeliveryAttempt,
  type FakeSchedulingService,
  type FakeSchedulingServiceOptions,
  startFakeSchedulingService,
  type TriggerOptions,
  type Webhook,
} from './service.js'
export {
  type SignedRequestOptions,
  sendTestEvent,
  signedRequest,
  WEBHOOK_USER_AGENT,
} from './sign.js'
export { runTokenStoreConformance, type StoreConformanceOptions } from './store-conformance.js'
export {
  runSubscriptionStoreConformance,
  type SubscriptionConformanceOptions,
} from './subscription-conformance.js'
