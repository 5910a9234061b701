// The exact public surface of each entry point, types and values alike, read from the built
// declarations. Adding or dropping a public name is a decision: change the list here with it.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  ADAPTER_REEXPORTS,
  exportedNames,
  exportedNamesOf,
  TYPE_CHECK_TIMEOUT_MS,
} from '../../../../internal/conformance/src/exports.js'

const require = createRequire(import.meta.url)
const dist = (file: string) => fileURLToPath(new URL(`../../dist/${file}`, import.meta.url))

// Each entry point's names. The concerns' entries together are the root; `adapter`, `store` and
// `queue` are plumbing for the packages built on core, never at the root.
const ENTRIES = {
  compose: [
    'acceptParsedBody',
    'BodyLimitOptions',
    'checkAccountSignature',
    'checkSignature',
    'checkSignatureByLookup',
    'composeWebhooks',
    'ComposeWebhooksOptions',
    'dedupe',
    'DeliveryWatch',
    'enqueueTo',
    'handlers',
    'HeaderNames',
    'logErrors',
    'NextPart',
    'parseEvent',
    'readBody',
    'readFetchBody',
    'recordIn',
    'refuseOlderThan',
    'traced',
    'WebhookDelivery',
    'WebhookPart',
    'WebhookPath',
  ],
  ledger: [
    'CatchUpAccounts',
    'CatchUpOptions',
    'CatchUpReport',
    'createDeliveryLedger',
    'DeliveryLedger',
    'DeliveryLedgerOptions',
    'DeliverySource',
    'DeliveryStatus',
    'LedgerEntry',
    'LedgerFeed',
    'LedgerFilter',
    'LedgerPage',
    'LedgerPurge',
    'LedgerPurged',
    'LedgerQueue',
    'LedgerStore',
    'MemoryLedgerStore',
    'MemoryLedgerStoreOptions',
    'precedenceOf',
    'RecentAnswer',
    'RecentDropped',
    'ReplayOptions',
    'ReplayReport',
    'ReplayRequest',
    'ReplayRunner',
    'RereadReport',
    'ResourceMark',
    'StoredLedgerEntry',
    'StoredResourceMark',
  ],
  lazy: ['LazyScheduling', 'lazyScheduling'],
  page: [
    'createDeliveryPage',
    'DeliveryPage',
    'LedgerPageOptions',
    'PageAnswer',
    'PageLedger',
    'PageNodeRequest',
    'PageNodeResponse',
    'PageRequest',
  ],
  setup: [
    'createScheduling',
    'memoryStores',
    'PeriodicReport',
    'PeriodicStepResult',
    'PeriodicTaskReport',
    'RunDueOptions',
    'Scheduling',
    'SchedulingOptions',
    'SchedulingStores',
    'StoreBundle',
  ],
  webhooks: [
    'AnyWebhookEvent',
    'ClaimResult',
    'constructEvent',
    'ConstructEventOptions',
    'createWebhookHandler',
    'CustomWebhookPayloads',
    'DedupeStore',
    'DefaultWebhookPayloads',
    'EarlyEviction',
    'EVENT_TYPES',
    'EventAttendee',
    'EventConferencing',
    'EventPayment',
    'EventPattern',
    'EventPrefixPattern',
    'EventResource',
    'EventsMatching',
    'EventState',
    'HandlerMap',
    'HeadersInput',
    'isEventType',
    'isKnownEventType',
    'matchSignature',
    'MemoryDedupeStore',
    'MemoryDedupeStoreOptions',
    'OpenRecord',
    'parseEnvelope',
    'PayloadId',
    'QueueDelivery',
    'RawBody',
    'SchedulingLink',
    'Secrets',
    'SecretLookup',
    'SecretSource',
    'signPayload',
    'SubscriptionLookup',
    'UnknownWebhookEvent',
    'verifySignature',
    'WebhookContext',
    'WebhookErrorContext',
    'WebhookErrorFn',
    'WebhookEvent',
    'WebhookEventType',
    'WebhookHandler',
    'WebhookHandlerFn',
    'WebhookHandlerOptions',
    'WebhookHandlerRestOptions',
    'WebhookPayload',
    'WorkflowAction',
    'WorkflowActionPayload',
    'WebhookQueue',
    'WebhookRegistration',
    'WebhookRequest',
    'WebhookResponse',
  ],
  oauth: [
    'CookieSecrets',
    'createOAuthClient',
    'createOAuthRoutes',
    'OAuthClient',
    'OAuthClientOptions',
    'OAuthRequest',
    'OAuthResponse',
    'OAuthRoutes',
    'OAuthRoutesOptions',
    'readConnectedKey',
    'ReadConnectionOptions',
  ],
  tokens: [
    'AccountInfo',
    'announceConnectionChange',
    'ConnectionApp',
    'ConnectionChange',
    'ConnectionStatus',
    'createTokenManager',
    'GetTokenOptions',
    'MemoryTokenStore',
    'MemoryTokenStoreOptions',
    'newConnection',
    'RefreshAhead',
    'RefreshAheadOptions',
    'RefreshAheadReport',
    'TokenManager',
    'TokenManagerOptions',
    'TokenRefresher',
    'TokenRecord',
    'TokenSet',
    'TokenState',
    'TokenStatus',
    'TokenStore',
    'WebhookStatus',
  ],
  client: [
    'ApiError',
    'ApiEvent',
    'ApiRetryOptions',
    'ApiWebhook',
    'CreatedWebhook',
    'createSchedulingClient',
    'CursorPage',
    'CursorPageOptions',
    'EventListOptions',
    'EventsApi',
    'FetchLike',
    'isApiError',
    'SchedulingClient',
    'SchedulingClientOptions',
    'SchedulingUser',
    'WebhooksApi',
  ],
  subscriptions: [
    'createWebhookSubscriptions',
    'EnsureResult',
    'HeldRetry',
    'isRetryStore',
    'LedgerOfDeliveries',
    'MemorySubscriptionStore',
    'MemorySubscriptionStoreOptions',
    'MemorySweepStore',
    'PhaseRange',
    'RateCap',
    'RateCapOptions',
    'RateCapStore',
    'RateLimits',
    'RateTurn',
    'ReconcileAccount',
    'ReconcileReport',
    'RemoveResult',
    'RetryHold',
    'RetryStore',
    'RotateResult',
    'StepOptions',
    'StoredSubscription',
    'SubscribedWebhook',
    'SubscriptionRecord',
    'SubscriptionStore',
    'SweepCheckpoint',
    'SweepOptions',
    'SweepReport',
    'SweepStore',
    'WebhookOwner',
    'WebhookSubscriptions',
    'WebhookSubscriptionsOptions',
  ],
  credentials: [
    'createCredentialCipher',
    'CredentialCipher',
    'CredentialCipherOptions',
    'CredentialContext',
    'CredentialKey',
    'encryptSubscriptionStore',
    'encryptTokenStore',
    'generateCredentialKey',
    'isSealedCredential',
    'OpenedCredential',
    'ReencryptResult',
  ],
  telemetry: [
    'checkHealth',
    'HealthCheck',
    'HealthChecked',
    'HealthOptions',
    'HealthReport',
    'Logger',
    'OAUTH_REDACTED_PARAMS',
    'OpenTelemetryApi',
    'redactOAuthSpan',
    'redactOAuthUrl',
    'useOpenTelemetry',
  ],
  errors: [
    'ApiError',
    'ClientErrorCode',
    'ClosedError',
    'ConfigError',
    'ConfigErrorCode',
    'CredentialError',
    'CredentialErrorCode',
    'IncompleteScanError',
    'InvalidResponseError',
    'isApiError',
    'isOAuthFlowError',
    'isSchedulingError',
    'isTransientError',
    'isWebhookError',
    'ListTooLongError',
    'NetworkError',
    'NotConnectedError',
    'OAUTH_FLOW_ERROR_STATUS',
    'OAuthError',
    'OAuthFlowError',
    'OAuthFlowErrorCode',
    'ReauthorizationRequiredError',
    'RedirectRefusedError',
    'SchedulingError',
    'SchedulingErrorCode',
    'StaleWriteError',
    'StoreErrorCode',
    'StoreFullError',
    'StoreNotMigratedError',
    'SubscriptionBusyError',
    'TimeoutError',
    'WEBHOOK_ERROR_STATUS',
    'WebhookError',
    'WebhookErrorCode',
  ],
  adapter: [
    'appEventLogger',
    'attachWebhookMethods',
    'BodySource',
    'createWebhookHandler',
    'ErrorEventApp',
    'mountPathOf',
    'nodeBody',
    'NodeResponse',
    'NodeStream',
    'normalMount',
    'OAUTH_PATHS',
    'optionsOf',
    'quietParserRefusals',
    'requireCookieSecret',
    'serverErrorOf',
    'underMount',
    'WebhookMethods',
    'writeNode',
  ],
  store: [
    'accountKey',
    'accountOfKey',
    'cipherOption',
    'consoleLogger',
    'decodeStoreKey',
    'DEFAULT_BODIES_PER_ACCOUNT',
    'encodeStoreKey',
    'failuresRead',
    'healthDetail',
    'HealthProblem',
    'healthReport',
    'identityKey',
    'inPhases',
    'latestTurn',
    'ledgerPageSize',
    'ledgerTimeOf',
    'markHorizonOf',
    'MAX_PAUSE_MS',
    'maxBodiesOption',
    'PHASES',
    'pauseOf',
    'phaseOf',
    'RateTurns',
    'readLedgerCursor',
    'RecordSealer',
    'reserveTurn',
    'runCheck',
    'saneTurns',
    'scopeOfKey',
    'serverText',
    'startTurns',
    'textOf',
    'throttleTurns',
    'wholeNumber',
  ],
  queue: [
    'consoleLogger',
    'DeliveryOutcome',
    'DeliveryRecord',
    'dispatchQueued',
    'encodeStoreKey',
    'GroupCommit',
    'HealthProblem',
    'healthReport',
    'inJobSpan',
    'JobSpanOptions',
    'jobKeyOf',
    'LedgerContext',
    'LedgerEnvelope',
    'newOwnerId',
    'QueuedDelivery',
    'queuedDelivery',
    'QueuedOutcome',
    'QueuedRunSettings',
    'RecordRunOptions',
    'runCheck',
    'runOnce',
    'RunOnceOptions',
    'RunOnceOutcome',
    'runQueued',
    'serverText',
    'VerifiedDelivery',
    'wholeNumber',
    'withinMs',
    'WorkerParts',
    'workerParts',
    'WorkerPartsOptions',
    'WorkerScheduling',
  ],
} satisfies Record<string, string[]>
const CONCERNS = [
  'webhooks',
  'oauth',
  'tokens',
  'client',
  'subscriptions',
  'credentials',
  'telemetry',
  'errors',
  'ledger',
  'lazy',
  'page',
  'setup',
] as const
const PLUMBING = ['adapter', 'store', 'queue'] as const
/** The composed webhook path's parts: an entry of their own, never at the root. */
const APART = ['compose'] as const
const ROOT = [...new Set(CONCERNS.flatMap((c) => ENTRIES[c]))].sort()
const sorted = (names: readonly string[]) => [...names].sort()

describe('public surface', () => {
  it(
    'each entry point exports exactly its list',
    () => {
      const entries = [...CONCERNS, ...PLUMBING, ...APART]
      const read = exportedNamesOf(entries.map((e) => dist(`${e}.d.ts`)))
      entries.forEach((e, i) => {
        expect(read[i], e).toEqual(sorted(ENTRIES[e]))
      })
    },
    TYPE_CHECK_TIMEOUT_MS,
  )

  it("@scheduling-kit/core exports every concern's names and nothing else", () => {
    expect(exportedNames(dist('index.d.ts'))).toEqual(ROOT)
  })

  it('the plumbing entries (adapter, store, queue) are never at the root, but for the handler the middlewares wrap', () => {
    // An adapter's webhook path resolves one entry of core (each resolution costs Node about
    // 5 M instructions at start-up): the handler comes with the adapter kit.
    const WRAPPED = ['createWebhookHandler']
    for (const entry of PLUMBING)
      for (const name of ENTRIES[entry])
        if (!WRAPPED.includes(name)) expect(ROOT).not.toContain(name)
    expect(ROOT).toEqual(expect.arrayContaining(WRAPPED))
    for (const name of ENTRIES.compose) expect(ROOT, name).not.toContain(name)
  })

  it('@scheduling-kit/core/app exports the list every adapter re-exports, all of it from the root', () => {
    expect(exportedNames(dist('app.d.ts'))).toEqual([...ADAPTER_REEXPORTS].sort())
    for (const name of ADAPTER_REEXPORTS) expect(ROOT).toContain(name)
  })

  it('the package.json exports map names every entry point the build makes', async () => {
    const pkg = JSON.parse(
      await readFile(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
    ) as { exports: Record<string, unknown> }
    expect(Object.keys(pkg.exports).sort()).toEqual(
      [
        '.',
        './app',
        './package.json',
        ...[...CONCERNS, ...PLUMBING, ...APART].map((e) => `./${e}`),
      ].sort(),
    )
  })

  it(
    'the values of each built entry are the declared ones, imported or required',
    async () => {
      const values = (module: object) => Object.keys(module).sort()
      const declared = async (file: string) => {
        const all = exportedNames(dist(file))
        const module = await import(dist(file.replace('.d.ts', '.js')))
        return all.filter((name) => name in module).sort()
      }
      for (const entry of ['index', 'app', ...CONCERNS, ...PLUMBING, ...APART]) {
        const expected = await declared(`${entry}.d.ts`)
        expect(values(await import(dist(`${entry}.js`)))).toEqual(expected)
        expect(values(require(dist(`${entry}.js`)))).toEqual(expected)
      }
    },
    TYPE_CHECK_TIMEOUT_MS,
  )

  it('a name from its concern entry is the very binding of the root (one class), imported or required', async () => {
    const rootEsm = await import(dist('index.js'))
    const rootRequired = require(dist('index.js'))
    for (const entry of CONCERNS) {
      const esm = await import(dist(`${entry}.js`))
      const required = require(dist(`${entry}.js`))
      for (const name of Object.keys(esm)) {
        expect(esm[name], `${entry}.js ${name}`).toBe(rootEsm[name])
        expect(required[name], `${entry}.js ${name}, required`).toBe(rootRequired[name])
      }
    }
    // The store and queue kits share one module graph with the root too.
    expect(require(dist('store.js')).HealthProblem).toBe(require(dist('queue.js')).HealthProblem)
  })
})
