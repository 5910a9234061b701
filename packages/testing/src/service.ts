import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type ApiFailure, type AuthService, createAuthService } from '@scheduling-kit/fake-auth'
import {
  type ControlContext,
  checkOwnRequest,
  control,
  dashboard,
  registerWebhook as register,
} from './service-control.js'
import { Deliveries } from './service-deliveries.js'
import { EventBook } from './service-events.js'
import { isLoopback, json, Refused } from './service-http.js'
import type {
  AppSettings,
  DeliveryAttempt,
  FakeSchedulingService,
  FakeSchedulingServiceOptions,
  Webhook,
} from './service-types.js'

function pkceOption(pkce: FakeSchedulingServiceOptions['pkce']): boolean {
  if (pkce === undefined || pkce === 'required') return true
  if (pkce === 'optional') return false
  throw new TypeError(
    `startFakeSchedulingService: pkce must be 'required' or 'optional', got ${JSON.stringify(pkce)}.`,
  )
}

/**
 * The scheduling service on your machine: OAuth (consent page, strict token endpoint), the API
 * (`/v1/me`, `/me`), and webhooks signed and retried like the real ones, with a control API
 * (`/_control/...`) and a dashboard (`/`) for tests, the CLI and people.
 *
 * @example
 * ```ts
 * const service = await startFakeSchedulingService({ autoApprove: true })
 * const settings = service.connectApp('http://127.0.0.1:3000')
 * await service.trigger('event.created') // signed, retried like the real service
 * await service.close()
 * ```
 */
export async function startFakeSchedulingService(
  options: FakeSchedulingServiceOptions = {},
): Promise<FakeSchedulingService> {
  const auth: AuthService = createAuthService({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUris: options.redirectUris ?? [],
    expiresIn: options.expiresIn,
    authorize: options.autoApprove ? 'approve' : 'consent',
    appName: options.appName,
    requirePkce: pkceOption(options.pkce),
    reuseGraceMs: options.reuseGraceMs,
  })
  for (const [value, account] of Object.entries(options.personalAccessTokens ?? {}))
    auth.addPersonalAccessToken(value, account)
  const registry = auth.webhooks
  const events = new EventBook((authorization) => auth.accountOf(authorization))
  const deliveries = new Deliveries(registry, options, events)
  const listenHost = options.host ?? '127.0.0.1'
  const context: ControlContext = {
    auth,
    registry,
    deliveries,
    address: { host: listenHost, port: 0 },
  }
  const server = await listen(context, events, options)
  const url = `http://${listenHost}:${context.address.port}`
  return serviceFace({ url, server, auth, events, deliveries })
}

/** The service's server, listening: its routes, the address told to the control API. */
async function listen(
  context: ControlContext,
  events: EventBook,
  options: FakeSchedulingServiceOptions,
): Promise<Server> {
  const { auth } = context
  const listenHost = context.address.host
  const server = createServer(async (req, res) => {
    try {
      if (events.handle(req, res)) return
      if (await auth.handle(req, res)) return
      const path = (req.url ?? '/').split('?')[0]!
      if (path === '/_control' || path.startsWith('/_control/'))
        return await control(context, req, res, path)
      if (req.method === 'GET' && path === '/') {
        checkOwnRequest(context.address, req)
        return dashboard(context, res)
      }
      json(res, 404, { error: 'not_found' })
    } catch (error) {
      const status = error instanceof Refused ? error.status : 400
      json(res, status, { error: error instanceof Error ? error.message : 'bad request' })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, listenHost, resolve)
  })
  context.address.port = (server.address() as AddressInfo).port
  if (!isLoopback(listenHost)) {
    console.warn(
      `\n  WARNING: the fake scheduling service listens on ${listenHost}, beyond this machine's loopback.\n` +
        '  Anyone who reaches it can register webhooks, send signed events and read its\n' +
        '  deliveries, and use it to probe addresses from this machine. It has no access\n' +
        '  control: listen on 127.0.0.1 unless you need more, and only on a network you trust.\n',
    )
  }
  return server
}

/** What a test holds of the service: its addresses, its controls, its records. */
function serviceFace(parts: {
  url: string
  server: Server
  auth: AuthService
  events: EventBook
  deliveries: Deliveries
}): FakeSchedulingService {
  const { url, server, auth, events, deliveries } = parts
  const registry = auth.webhooks
  const registerWebhook = (input: Parameters<typeof register>[1]) => register(registry, input)
  return {
    url,
    /** The authorization server's address (`authUrl` of the OAuth options). */
    authUrl: url,
    /** The API's address with its `/v1` prefix (`apiUrl` / `baseUrl`). */
    apiUrl: `${url}/v1`,
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    /** OAuth controls: `setAuthorize`, `failNext`, `setLatency`, `counters`, `tokenRequests`, ... */
    auth,
    registerWebhook,
    webhooks: (account?: string | null) => registry.all(account),
    setWebhookState: (webhookId: string, state: Webhook['state']) => {
      if (!registry.setState(webhookId, state)) throw new Error(`no webhook ${webhookId}`)
    },
    dropWebhook: (webhookId: string) => {
      registry.remove(webhookId)
    },
    failApi: (failure: ApiFailure) => registry.failApi(failure),
    clearFailures: () => auth.clearFailures(),
    api: registry.counters,
    /** Successful webhook lists answered, by the account that asked. */
    listsByAccount: registry.listsByAccount,
    /**
     * Wires an app at `publicUrl` to this service: its OAuth redirect URI allowed and its webhook
     * registered with a fresh secret. Returns the settings the app needs.
     */
    connectApp: (publicUrl, paths = {}) => connectApp(auth, registerWebhook, url, publicUrl, paths),
    trigger: (type, overrides) => deliveries.trigger(type, overrides),
    redeliver: (deliveryId: string) => deliveries.redeliver(deliveryId),
    /** An account's Events as `GET /v1/events` lists them now. */
    events: (account: string) => events.of(account),
    /** The next event lists fail this way (429, 5xx); `count: 0` clears the ones queued. */
    failEvents: (failure) => events.fail(failure),
    /** What `GET /v1/events` answered so far. */
    eventLists: events.counters,
    allowRedirectUri: (uri: string) => auth.allowRedirectUri(uri),
    /** Makes one access token, or all of an account's, expire now. */
    expireToken: (tokenOrAccount: string) => auth.expireAccessToken(tokenOrAccount),
    revokeGrant: (account: string) => auth.revokeGrant(account),
    /** Every delivery attempt so far, oldest first. */
    deliveries: (): readonly DeliveryAttempt[] => deliveries.log,
    /** Resolves when no delivery is in flight or waiting for a retry. */
    idle: () => deliveries.idle(),
    close: () =>
      new Promise<void>((resolve) => {
        deliveries.stop()
        auth.releaseHanging()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Wires an app at `publicUrl` to the service at `url`: its OAuth redirect URI allowed and its
 * webhook registered with a fresh secret. Returns the settings the app needs.
 */
function connectApp(
  auth: AuthService,
  registerWebhook: (input: { url: string }) => Webhook,
  url: string,
  publicUrl: string,
  paths: { callback?: string; webhook?: string },
): AppSettings {
  const redirectUri = `${publicUrl}${paths.callback ?? '/auth/scheduling/callback'}`
  auth.allowRedirectUri(redirectUri)
  const hook = registerWebhook({ url: `${publicUrl}${paths.webhook ?? '/webhooks/scheduling'}` })
  return {
    publicUrl,
    redirectUri,
    clientId: auth.clientId,
    clientSecret: auth.clientSecret,
    authUrl: url,
    apiUrl: `${url}/v1`,
    webhookId: hook.id,
    webhookSecret: hook.secret,
  }
}
