// The exact public surface of @scheduling-kit/testing, read from the built declarations: no
// type may point at the private fake-auth package. Change the list deliberately.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { exportedNames, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'AppInstance',
  'AppInstanceOptions',
  'AppSettings',
  'AccountGrants',
  'ApiCounters',
  'ApiFailure',
  'AuthCounters',
  'AuthFailure',
  'AuthorizeMode',
  'AuthService',
  'completeOAuthFlow',
  'ConnectionScenarioOptions',
  'createTestEvent',
  'DedupeTiming',
  'DeliveryAttempt',
  'EventsFailure',
  'FakeSchedulingService',
  'FakeSchedulingServiceOptions',
  'InstanceLog',
  'LedgerStoreKitOptions',
  'ListedEvent',
  'OAuthFlowOptions',
  'OutageStores',
  'ProbedSpan',
  'QueueKit',
  'QueueTraceProbe',
  'QueueUnderTest',
  'RaceStop',
  'RateCapRaceOptions',
  'RateCapRaceReport',
  'RateCapStoreConformanceOptions',
  'RateField',
  'RefreshAheadOutageOptions',
  'RefreshAheadOutageReport',
  'RefreshRaceFaultsOptions',
  'RefreshRaceOptions',
  'RefreshRaceReport',
  'RefreshRaceRound',
  'runConnectionScenarios',
  'runDedupeStoreConformance',
  'runLedgerScenarios',
  'runLedgerStoreConformance',
  'runRefreshAheadOutage',
  'runRefreshRace',
  'runRefreshRaceFaults',
  'runSubscriptionStoreConformance',
  'runRateCapRace',
  'runRateCapStoreConformance',
  'runRetryStoreConformance',
  'runSweepStoreConformance',
  'runWebhookQueueConformance',
  'runTokenStoreConformance',
  'sendTestEvent',
  'SignedRequestOptions',
  'signedRequest',
  'SlowLink',
  'SlowLinkOptions',
  'StoreConformanceOptions',
  'startAppInstance',
  'startFakeSchedulingService',
  'startSlowLink',
  'SubscriptionConformanceOptions',
  'SweepStoreConformanceOptions',
  'TestEventOverrides',
  'TokenRequest',
  'TokenResponseBody',
  'TriggerOptions',
  'WEBHOOK_USER_AGENT',
  'Webhook',
]

it(
  '@scheduling-kit/testing exports exactly its names, with every type inlined',
  () => {
    const dist = fileURLToPath(new URL('../dist/index.d.ts', import.meta.url))
    expect(exportedNames(dist)).toEqual([...NAMES].sort())
    const text = readFileSync(dist, 'utf8')
    expect(text).not.toMatch(/fake-auth|internal\//)
    // Every import is of a package: a relative one would point into the private sources.
    expect(text.match(/from '\.{1,2}\/[^']*'/g) ?? []).toEqual([])
  },
  TYPE_CHECK_TIMEOUT_MS,
)
