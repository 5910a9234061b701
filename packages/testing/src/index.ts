export type {
  AuthorizeMode,
  AuthService,
  TokenRequest,
} from '../../../internal/fake-auth/src/index.js'
export { createTestEvent, type TestEventOverrides } from './events.js'
export { completeOAuthFlow, type OAuthFlowOptions } from './flow.js'
export {
  type AppSettings,
  type DeliveryAttempt,
  type FakeSchedulingService,
  type FakeSchedulingServiceOptions,
  startFakeSchedulingService,
  type Webhook,
} from './service.js'
export {
  type SignedRequestOptions,
  sendTestEvent,
  signedRequest,
  WEBHOOK_USER_AGENT,
} from './sign.js'
export { runTokenStoreConformance, type StoreConformanceOptions } from './store-conformance.js'
