import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AnyWebhookEvent } from '@scheduling-kit/core'
import {
  type ApiCounters,
  type ApiFailure,
  type AuthService,
  createAuthService,
  type FakeWebhook,
} from '@scheduling-kit/fake-auth'
import { dashboardPage } from './dashboard.js'
import { createTestEvent, type TestEventOverrides } from './events.js'
import { signedRequest } from './sign.js'

export interface FakeSchedulingServiceOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number
  host?: string
  clientId?: string
  clientSecret?: string
  /** Redirect URIs of the OAuth application; more with `allowRedirectUri`. */
  redirectUris?: string[]
  /** Approve at once instead of showing the consent page. Default false. */
  autoApprove?: boolean
  /** The application's name on the consent page. Default `Application <clientId>`. */
  appName?: string
  /** `expires_in` of access tokens, seconds. Default 7200. */
  expiresIn?: number
  /** Personal access tokens: token value to account id. */
  personalAccessTokens?: Record<string, string>
  /** Delays before each retry of a failed delivery, ms. Default 10 s, 1 min, 5 min, 30 min, 2 h. */
  retrySchedule?: number[]
  /** How long a receiver has to answer, ms. Default 10 000. */
  deliveryTimeoutMs?: number
  /**
   * Failed delivery attempts in a row after which the service sets a webhook `disabled` and
   * stops delivering to it (retries included). Default: never.
   */
  disableAfter?: number
  /**
   * Whether an account's event goes to each of its active webhooks (true, the default: during a
   * rotation the same payload id then reaches both) or to its newest one only.
   */
  deliverToEachWebhook?: boolean
}

/** A webhook as the fake service keeps it. */
export interface Webhook {
  id: string
  url: string
  secret: string
  /** Event types it receives; all when empty. */
  events: string[]
  /** `active`, or `disabled` / `deleted` (the service's doing): either gets no delivery. */
  state: 'active' | 'disabled' | 'deleted'
  /** The account whose events it receives; `undefined` for an app-wide webhook (`registerWebhook`, `connectApp`). */
  account: string | undefined
  created_at: string
  /** Failed deliveries in a row. */
  failures: number
}

/** What an app needs to talk to the fake service (see `connectApp`). */
export interface AppSettings {
  publicUrl: string
  redirectUri: string
  clientId: string
  clientSecret: string
  authUrl: string
  apiUrl: string
  webhookId: string
  webhookSecret: string
}

export interface DeliveryAttempt {
  deliveryId: string
  webhookId: string
  payloadId: string
  type: string
  attempt: number
  at: string
  /** The receiver's status, when it answered. */
  status?: number
  error?: string
  ok: boolean
  /** When the next attempt is due, if one is. */
  retryAt?: string
}

/** Where `trigger` sends an event, and what it holds. */
export type TriggerOptions = TestEventOverrides & {
  /** The account the event belongs to: it goes to that account's active webhooks. */
  account?: string
  /** One webhook only. */
  webhookId?: string
}

/** The fake service, running: its addresses, its OAuth side, and controls for tests. */
export interface FakeSchedulingService {
  /** Its address, `http://127.0.0.1:<port>`. */
  readonly url: string
  /** The authorization server's address (`authUrl` of the OAuth options). */
  readonly authUrl: string
  /** The API's address with its `/v1` prefix (`apiUrl` / `baseUrl`). */
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
  /** OAuth controls: `setAuthorize`, `failNext`, `setLatency`, `counters`, `tokenRequests`, ... */
  readonly auth: AuthService
  /**
   * Registers a webhook (a fresh secret unless one is given): app-wide, or an account's when
   * `account` is given (as the API's `POST /v1/webhooks` with that account's token does).
   */
  registerWebhook(input: {
    url: string
    secret?: string
    events?: string[]
    id?: string
    account?: string
  }): Webhook
  /** The webhooks, oldest first: every one, or one account's (`null`: the app-wide ones). */
  webhooks(account?: string | null): Webhook[]
  /** Sets a webhook's state as the service would on its own: `disabled`, or `deleted` (still listed). */
  setWebhookState(id: string, state: Webhook['state']): void
  /** Removes a webhook without a trace, as if the service lost it. */
  dropWebhook(id: string): void
  /** Makes the next webhook API requests fail (429 with or without `Retry-After`, 5xx, slow, landed). */
  failApi(failure: ApiFailure): void
  /** What the webhook API answered so far. */
  readonly api: ApiCounters
  /**
   * Wires an app at `publicUrl` to this service: its OAuth redirect URI allowed and its webhook
   * registered with a fresh secret. Returns the settings the app needs.
   */
  connectApp(publicUrl: string, paths?: { callback?: string; webhook?: string }): AppSettings
  /**
   * Sends an event of `type` and retries failed deliveries: with `account`, to that account's
   * active webhooks; with `webhookId`, to that webhook; else to the app-wide webhooks.
   */
  trigger(
    type: string,
    overrides?: TriggerOptions,
  ): Promise<{ event: AnyWebhookEvent; deliveries: DeliveryAttempt[] }>
  allowRedirectUri(uri: string): void
  /** Makes one access token, or all of an account's, expire now. */
  expireToken(tokenOrAccount: string): void
  revokeGrant(account: string): void
  /** Every delivery attempt so far, oldest first. */
  deliveries(): readonly DeliveryAttempt[]
  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>
  close(): Promise<void>
}

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`

function json(res: ServerResponse, status: number, body: unknown) {
  res
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify(body))
}

/** A control request refused before it is read: its status and what to do. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * Reads a control request's JSON body. Only `application/json` is taken: a page on another
 * site can post a form (urlencoded, multipart, text/plain) here without asking, but not JSON.
 */
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase()
  if (type !== 'application/json') {
    throw new Refused(415, 'The control API takes JSON only (content-type: application/json).')
  }
  let text = ''
  for await (const chunk of req) {
    text += chunk
    if (text.length > 256 * 1024) throw new Refused(413, 'body too large')
  }
  if (text === '') return {}
  const value = JSON.parse(text) as unknown
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Refused(400, 'The body must be a JSON object.')
  return value as Record<string, unknown>
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** Whether a listening address is this machine's loopback only. */
function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/**
 * Whether a `Host` header names this service: its own host, `localhost`, or an IP address, on
 * its port. A name that merely resolves here (DNS rebinding: a site's own name pointed at
 * 127.0.0.1) is refused, so another site's page cannot read or drive the service.
 */
function isOwnHost(header: string | undefined, listenHost: string, port: number): boolean {
  if (header === undefined || !URL.canParse(`http://${header}`)) return false
  const url = new URL(`http://${header}`)
  if (url.port !== String(port) || url.username !== '' || url.pathname !== '/') return false
  const name = url.hostname
  return (
    name === listenHost ||
    name === 'localhost' ||
    /^\d{1,3}(\.\d{1,3}){3}$/.test(name) ||
    (name.startsWith('[') && name.endsWith(']'))
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
  })
  for (const [value, account] of Object.entries(options.personalAccessTokens ?? {}))
    auth.addPersonalAccessToken(value, account)
  const retrySchedule = options.retrySchedule ?? [10_000, 60_000, 300_000, 1_800_000, 7_200_000]
  const timeoutMs = options.deliveryTimeoutMs ?? 10_000
  const registry = auth.webhooks
  const disableAfter = options.disableAfter
  const log: DeliveryAttempt[] = []
  const timers = new Set<ReturnType<typeof setTimeout>>()
  const inFlight = new Set<Promise<unknown>>()
  let idleWaiters: Array<() => void> = []

  function settleIdle() {
    if (timers.size === 0 && inFlight.size === 0)
      for (const resolve of idleWaiters.splice(0)) resolve()
  }

  /** One attempt; schedules the next on failure. Resolves to the attempt's record. */
  function attempt(
    webhook: FakeWebhook,
    event: AnyWebhookEvent,
    deliveryId: string,
    n: number,
  ): Promise<DeliveryAttempt> {
    const run = (async () => {
      const record: DeliveryAttempt = {
        deliveryId,
        webhookId: webhook.id,
        payloadId: event.id,
        type: event.type,
        attempt: n,
        at: new Date().toISOString(),
        ok: false,
      }
      try {
        const { body, headers } = await signedRequest(event, {
          secret: webhook.secret,
          webhookId: webhook.id,
        })
        const res = await fetch(webhook.url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(timeoutMs),
        })
        await res.arrayBuffer().catch(() => {})
        record.status = res.status
        record.ok = res.status >= 200 && res.status < 300
      } catch (error) {
        record.error = error instanceof Error ? error.message : String(error)
      }
      webhook.failures = record.ok ? 0 : webhook.failures + 1
      if (!record.ok && disableAfter !== undefined && webhook.failures >= disableAfter) {
        registry.setState(webhook.id, 'disabled')
      }
      const delay = retrySchedule[n - 1]
      if (!record.ok && delay !== undefined && isLive(webhook)) {
        record.retryAt = new Date(Date.now() + delay).toISOString()
        const timer = setTimeout(() => {
          timers.delete(timer)
          // A webhook disabled or deleted since gets no more retries.
          if (isLive(webhook)) void attempt(webhook, event, deliveryId, n + 1)
          else settleIdle()
        }, delay)
        timers.add(timer)
      }
      log.push(record)
      return record
    })()
    inFlight.add(run)
    void run.finally(() => {
      inFlight.delete(run)
      settleIdle()
    })
    return run
  }

  /** Whether a webhook still gets deliveries: it exists and is active. */
  const isLive = (webhook: FakeWebhook) => registry.get(webhook.id)?.state === 'active'

  function registerWebhook(input: {
    url: string
    secret?: string
    events?: string[]
    id?: string
    account?: string
  }): Webhook {
    if (typeof input?.url !== 'string' || !URL.canParse(input.url))
      throw new Error('registerWebhook: url must be an absolute URL')
    const protocol = new URL(input.url).protocol
    if (protocol !== 'http:' && protocol !== 'https:')
      throw new Error('registerWebhook: url must be an http: or https: URL')
    // A webhook is never replaced: its URL and secret stay what they were when it was made.
    if (input.id !== undefined && registry.get(input.id) !== undefined)
      throw new Refused(409, `registerWebhook: a webhook ${input.id} exists already`)
    return registry.create(input)
  }

  /** Where an event goes: one webhook, an account's active ones, or the app-wide ones. */
  function targetsOf(type: string, webhookId?: string, account?: string): FakeWebhook[] {
    if (webhookId !== undefined) {
      const one = registry.get(webhookId)
      return one !== undefined && one.state === 'active' ? [one] : []
    }
    const live = registry
      .all(account ?? null)
      .filter((w) => w.state === 'active' && (w.events.length === 0 || w.events.includes(type)))
    return account !== undefined && options.deliverToEachWebhook === false ? live.slice(-1) : live
  }

  /** Sends an event where `targetsOf` says; resolves after the first attempts. */
  async function trigger(type: string, overrides?: TriggerOptions) {
    const { webhookId, account, ...rest } = overrides ?? {}
    const event = createTestEvent(type, rest)
    const targets = targetsOf(type, webhookId, account)
    const deliveries = await Promise.all(targets.map((w) => attempt(w, event, id('dlv'), 1)))
    return { event, deliveries }
  }

  let notice: string | undefined

  /** The answer; after a dashboard button (`redirect` set), the notice its next load shows. */
  function done(res: ServerResponse, form: boolean, status: number, body: unknown, said: string) {
    if (form) notice = said
    return json(res, status, body)
  }

  /**
   * The control API and the dashboard answer only requests that are this machine's own: a
   * `Host` that names the service (not a rebound DNS name), no `Origin` but the service's, and
   * no cross-site fetch metadata.
   */
  function checkOwnRequest(req: IncomingMessage): void {
    const host = req.headers.host
    if (!isOwnHost(host, listenHost, port)) {
      throw new Refused(
        403,
        `The fake service answers its control API only at its own address (http://${listenHost}:${port}), not at the Host this request named.`,
      )
    }
    const origin = req.headers.origin
    if (origin !== undefined && origin !== `http://${host}`) {
      throw new Refused(403, 'The control API is not for other sites: this request came from one.')
    }
    const site = req.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      throw new Refused(403, 'The control API is not for other sites: this request came from one.')
    }
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string) {
    checkOwnRequest(req)
    const body = req.method === 'POST' ? await readJson(req) : {}
    const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : undefined)
    const form = str('redirect') !== undefined
    switch (`${req.method} ${path}`) {
      case 'GET /_control':
        return json(res, 200, {
          webhooks: registry.all().map(({ secret, ...w }) => w),
          deliveries: log.length,
          counters: auth.counters,
          accounts: auth.accounts(),
        })
      case 'POST /_control/webhooks':
        return json(
          res,
          201,
          registerWebhook({
            url: str('url')!,
            secret: str('secret'),
            events: body.events as string[] | undefined,
            id: str('id'),
            account: str('account'),
          }),
        )
      case 'POST /_control/webhooks/state': {
        const webhookId = str('id') ?? ''
        const state = str('state') ?? 'disabled'
        if (state !== 'active' && state !== 'disabled' && state !== 'deleted')
          return json(res, 400, { error: 'state is active, disabled or deleted' })
        if (!registry.setState(webhookId, state))
          return json(res, 404, { error: `no webhook ${webhookId}` })
        return done(res, form, 200, { id: webhookId, state }, `Webhook ${webhookId} is ${state}.`)
      }
      case 'POST /_control/api-failures': {
        const status = Number(body.status ?? 500)
        if (!Number.isInteger(status) || status < 400 || status > 599)
          return json(res, 400, { error: 'status must be a 4xx or 5xx code' })
        registry.failApi({
          status,
          count: Number(body.count ?? 1),
          retryAfter: str('retryAfter'),
          method: str('method'),
          landed: body.landed === true,
        })
        return json(res, 200, { ok: true })
      }
      case 'GET /_control/accounts':
        return json(
          res,
          200,
          auth.accounts().map((a) => ({
            ...a,
            webhooks: registry.all(a.account).map(({ secret, ...w }) => w),
          })),
        )
      case 'POST /_control/trigger': {
        const type = str('type')
        if (!type) return json(res, 400, { error: 'type is required' })
        const webhookId = str('webhookId')
        if (webhookId !== undefined && registry.get(webhookId) === undefined)
          return json(res, 404, { error: `no webhook ${webhookId}` })
        const result = await trigger(type, { webhookId, account: str('account') })
        const answers = result.deliveries.map((d) => d.status ?? d.error).join(', ')
        return done(
          res,
          form,
          200,
          result,
          `Sent ${type} (${result.event.id}) to ${result.deliveries.length} webhook(s): ${answers || 'none subscribed'}.`,
        )
      }
      case 'GET /_control/deliveries':
        return json(res, 200, log)
      case 'POST /_control/tokens/expire': {
        const target = str('token') ?? str('account') ?? ''
        auth.expireAccessToken(target)
        return done(res, form, 200, { expired: true }, `Access tokens of ${target} expired.`)
      }
      case 'POST /_control/grants/revoke': {
        const account = str('account') ?? ''
        auth.revokeGrant(account)
        return done(res, form, 200, { revoked: true }, `Every grant of ${account} revoked.`)
      }
      case 'POST /_control/failures':
        auth.failNext(
          ...Array.from(
            { length: Number(body.count ?? 1) },
            () => (Number(body.status ?? 500) === 503 ? 503 : 500) as 500 | 503,
          ),
        )
        return json(res, 200, { ok: true })
      case 'POST /_control/latency':
        auth.setLatency(Number(body.ms ?? 0))
        return json(res, 200, { ok: true })
    }
    json(res, 404, { error: 'not_found' })
  }

  function dashboard(res: ServerResponse) {
    const page = dashboardPage({
      webhooks: registry.all(),
      deliveries: log,
      accounts: auth.accounts(),
      notice,
    })
    notice = undefined
    res
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(page)
  }

  const server = createServer(async (req, res) => {
    try {
      if (await auth.handle(req, res)) return
      const path = (req.url ?? '/').split('?')[0]!
      if (path === '/_control' || path.startsWith('/_control/'))
        return await control(req, res, path)
      if (req.method === 'GET' && path === '/') {
        checkOwnRequest(req)
        return dashboard(res)
      }
      json(res, 404, { error: 'not_found' })
    } catch (error) {
      const status = error instanceof Refused ? error.status : 400
      json(res, status, { error: error instanceof Error ? error.message : 'bad request' })
    }
  })
  const listenHost = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, listenHost, resolve)
  })
  const { port } = server.address() as AddressInfo
  const url = `http://${listenHost}:${port}`
  if (!isLoopback(listenHost)) {
    console.warn(
      `\n  WARNING: the fake scheduling service listens on ${listenHost}, beyond this machine's loopback.\n` +
        '  Anyone who reaches it can register webhooks, send signed events and read its\n' +
        '  deliveries, and use it to probe addresses from this machine. It has no access\n' +
        '  control: listen on 127.0.0.1 unless you need more, and only on a network you trust.\n',
    )
  }

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
    api: registry.counters,
    /**
     * Wires an app at `publicUrl` to this service: its OAuth redirect URI allowed and its webhook
     * registered with a fresh secret. Returns the settings the app needs.
     */
    connectApp(
      publicUrl: string,
      paths: { callback?: string; webhook?: string } = {},
    ): AppSettings {
      const redirectUri = `${publicUrl}${paths.callback ?? '/auth/scheduling/callback'}`
      auth.allowRedirectUri(redirectUri)
      const hook = registerWebhook({
        url: `${publicUrl}${paths.webhook ?? '/webhooks/scheduling'}`,
      })
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
    },
    trigger,
    allowRedirectUri: (uri: string) => auth.allowRedirectUri(uri),
    /** Makes one access token, or all of an account's, expire now. */
    expireToken: (tokenOrAccount: string) => auth.expireAccessToken(tokenOrAccount),
    revokeGrant: (account: string) => auth.revokeGrant(account),
    /** Every delivery attempt so far, oldest first. */
    deliveries: (): readonly DeliveryAttempt[] => log,
    /** Resolves when no delivery is in flight or waiting for a retry. */
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.push(resolve)
        settleIdle()
      }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        idleWaiters = []
        auth.releaseHanging()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
