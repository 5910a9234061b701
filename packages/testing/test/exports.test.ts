// The exact public surface of @scheduling-kit/testing, read from the built declarations: no
// type may point at the private fake-auth package. Change the list deliberately.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { exportedNames, TYPE_CHECK_TIMEOUT_MS } from '@scheduling-kit/conformance'
import { expect, it } from 'vitest'

const NAMES = [
  'AppSettings',
  'AccountGrants',
  'AuthCounters',
  'AuthFailure',
  'AuthorizeMode',
  'AuthService',
  'completeOAuthFlow',
  'createTestEvent',
  'DedupeTiming',
  'DeliveryAttempt',
  'FakeSchedulingService',
  'FakeSchedulingServiceOptions',
  'OAuthFlowOptions',
  'RaceStop',
  'RefreshRaceFaultsOptions',
  'RefreshRaceOptions',
  'RefreshRaceReport',
  'RefreshRaceRound',
  'runDedupeStoreConformance',
  'runRefreshRace',
  'runRefreshRaceFaults',
  'runTokenStoreConformance',
  'sendTestEvent',
  'SignedRequestOptions',
  'signedRequest',
  'StoreConformanceOptions',
  'startFakeSchedulingService',
  'TestEventOverrides',
  'TokenRequest',
  'TokenResponseBody',
  'WEBHOOK_USER_AGENT',
  'Webhook',
]

it(
  '@scheduling-kit/testing exports exactly its names, with every type inlined',
  () => {
    for (const file of ['index.d.ts', 'index.d.cts']) {
      const dist = fileURLToPath(new URL(`../dist/${file}`, import.meta.url))
      expect(exportedNames(dist)).toEqual([...NAMES].sort())
      expect(readFileSync(dist, 'utf8')).not.toMatch(/fake-auth|internal\//)
    }
  },
  TYPE_CHECK_TIMEOUT_MS,
)
