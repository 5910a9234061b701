// The exact public surface of each entry point, types and values alike, read from the built
// declarations. Adding or dropping a public name is a decision: change the list here with it.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ADAPTER_REEXPORTS, exportedNames } from '../../../internal/conformance/src/exports.js'

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url))

const ROOT = [
  // Receiving webhooks
  'ConstructEventOptions',
  'constructEvent',
  'createWebhookHandler',
  'EventPattern',
  'EventPrefixPattern',
  'EventsMatching',
  'HandlerMap',
  'HeadersInput',
  'Logger',
  'SecretSource',
  'WebhookContext',
  'WebhookErrorContext',
  'WebhookErrorFn',
  'WebhookHandler',
  'WebhookHandlerFn',
  'WebhookHandlerOptions',
  'WebhookHandlerRestOptions',
  'WebhookQueue',
  'WebhookRegistration',
  'WebhookRequest',
  'WebhookResponse',
  // Connected accounts' webhooks
  'createWebhookSubscriptions',
  'EnsureResult',
  'MemorySubscriptionStore',
  'ReconcileAccount',
  'ReconcileReport',
  'RemoveResult',
  'RotateResult',
  'StoredSubscription',
  'SubscribedWebhook',
  'SubscriptionLookup',
  'SubscriptionRecord',
  'SubscriptionStore',
  'WebhookOwner',
  'WebhookSubscriptions',
  'WebhookSubscriptionsOptions',
  // Retries and duplicates
  'ClaimResult',
  'DedupeStore',
  'EarlyEviction',
  'MemoryDedupeStore',
  'MemoryDedupeStoreOptions',
  // Signatures
  'matchSignature',
  'RawBody',
  'Secrets',
  'signPayload',
  'verifySignature',
  // Events
  'AnyWebhookEvent',
  'CustomWebhookPayloads',
  'DefaultWebhookPayloads',
  'EVENT_TYPES',
  'EventAttendee',
  'EventConferencing',
  'EventResource',
  'EventState',
  'isEventType',
  'isKnownEventType',
  'OpenRecord',
  'PayloadId',
  'parseEnvelope',
  'QueueDelivery',
  'SchedulingLink',
  'UnknownWebhookEvent',
  'WebhookEvent',
  'WebhookEventType',
  'WebhookPayload',
  // Connecting accounts
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
  // Tokens
  'AccountInfo',
  'announceConnectionChange',
  'ConnectionApp',
  'ConnectionChange',
  'ConnectionStatus',
  'WebhookStatus',
  'createTokenManager',
  'GetTokenOptions',
  'MemoryTokenStore',
  'MemoryTokenStoreOptions',
  'TokenManager',
  'TokenManagerOptions',
  'TokenRecord',
  'TokenSet',
  'TokenState',
  'TokenStatus',
  'TokenStore',
  // Credentials at rest
  'CookieSecrets',
  'CredentialCipher',
  'CredentialCipherOptions',
  'CredentialContext',
  'CredentialError',
  'CredentialErrorCode',
  'CredentialKey',
  'createCredentialCipher',
  'encryptSubscriptionStore',
  'encryptTokenStore',
  'generateCredentialKey',
  'isSealedCredential',
  'MemorySubscriptionStoreOptions',
  'OpenedCredential',
  'ReencryptResult',
  // Calling the API
  'ApiRetryOptions',
  'ApiWebhook',
  'CreatedWebhook',
  'CursorPage',
  'CursorPageOptions',
  'WebhooksApi',
  'createSchedulingClient',
  'FetchLike',
  'SchedulingClient',
  'SchedulingClientOptions',
  'SchedulingUser',
  // Errors
  'ApiError',
  'ClientErrorCode',
  'ClosedError',
  'ConfigError',
  'ConfigErrorCode',
  'IncompleteScanError',
  'InvalidResponseError',
  'isApiError',
  'isOAuthFlowError',
  'isSchedulingError',
  'isTransientError',
  'isWebhookError',
  'NetworkError',
  'NotConnectedError',
  'RedirectRefusedError',
  'OAUTH_FLOW_ERROR_STATUS',
  'OAuthError',
  'OAuthFlowError',
  'OAuthFlowErrorCode',
  'ReauthorizationRequiredError',
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
  // Production: telemetry and readiness
  'checkHealth',
  'HealthCheck',
  'HealthChecked',
  'HealthOptions',
  'HealthReport',
  'OpenTelemetryApi',
  'useOpenTelemetry',
  'OAUTH_REDACTED_PARAMS',
  'redactOAuthSpan',
  'redactOAuthUrl',
]

const ADAPTER = [
  'attachWebhookMethods',
  'BodySource',
  'cipherOption',
  'consoleLogger',
  'decodeStoreKey',
  'encodeStoreKey',
  'HealthProblem',
  'healthDetail',
  'healthReport',
  'inJobSpan',
  'JobSpanOptions',
  'mountPathOf',
  'NodeResponse',
  'NodeStream',
  'nodeBody',
  'normalMount',
  'OAUTH_PATHS',
  'optionsOf',
  'appEventLogger',
  'ErrorEventApp',
  'quietParserRefusals',
  'RecordSealer',
  'requireCookieSecret',
  'runCheck',
  'serverErrorOf',
  'serverText',
  'RunOnceOptions',
  'RunOnceOutcome',
  'runOnce',
  'underMount',
  'WebhookMethods',
  'wholeNumber',
  'writeNode',
]

describe('public surface', () => {
  it('@scheduling-kit/core exports exactly what apps call', () => {
    expect(exportedNames(dist('index.d.ts'))).toEqual([...ROOT].sort())
    expect(exportedNames(dist('index.d.cts'))).toEqual([...ROOT].sort())
  })

  it('@scheduling-kit/core/adapter exports exactly the adapter plumbing, none of it at the root', () => {
    expect(exportedNames(dist('adapter.d.ts'))).toEqual([...ADAPTER].sort())
    expect(exportedNames(dist('adapter.d.cts'))).toEqual([...ADAPTER].sort())
    for (const name of ADAPTER) expect(ROOT).not.toContain(name)
  })

  it('@scheduling-kit/core/app exports the list every adapter re-exports, all of it from the root', () => {
    expect(exportedNames(dist('app.d.ts'))).toEqual([...ADAPTER_REEXPORTS].sort())
    expect(exportedNames(dist('app.d.cts'))).toEqual([...ADAPTER_REEXPORTS].sort())
    for (const name of ADAPTER_REEXPORTS) expect(ROOT).toContain(name)
  })

  it('the values of each built entry are the declared ones (ESM and CJS, both builds)', async () => {
    const values = (module: object) => Object.keys(module).sort()
    const declared = async (file: string) => {
      const all = exportedNames(dist(file))
      const module = await import(dist(file.replace('.d.ts', '.js')))
      return all.filter((name) => name in module).sort()
    }
    for (const entry of ['index', 'adapter', 'app']) {
      const expected = await declared(`${entry}.d.ts`)
      expect(values(await import(dist(`${entry}.js`)))).toEqual(expected)
      expect(values(await import(dist(`${entry}.node.js`)))).toEqual(expected)
    }
  })
})
