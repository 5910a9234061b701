import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type ConnectionChange,
  createOAuthClient,
  createOAuthRoutes,
  createSchedulingClient,
  createTokenManager,
  createWebhookHandler,
  createWebhookSubscriptions,
  type FetchLike,
  type SubscriptionStore,
  type TokenManager,
  type TokenStore,
  type WebhookSubscriptions,
} from '@scheduling-kit/core'
import type { FakeSchedulingService } from './service-types.js'

// One instance of an app that connects accounts, as the connection scenarios run it: its own
// token manager, subscriptions, OAuth routes and webhook endpoint, served over loopback HTTP,
// on stores it is given (several instances share the same stores, as processes share Redis).

/** What an instance saw: deliveries handled (with the key they ran for) and connection changes. */
export interface InstanceLog {
  handled: { key: string; type: string; webhookId: string }[]
  changes: ConnectionChange[]
}

export interface AppInstance {
  readonly url: string
  readonly loginUrl: string
  readonly tokens: TokenManager
  readonly subscriptions: WebhookSubscriptions
  readonly log: InstanceLog
  /** The service account the key's token answers for, by `GET /me` with the manager's token. */
  me(key: string): Promise<string>
  /** The key a browser's cookie names, while its connection is the stored one. */
  connectedKey(cookie: string): Promise<string | undefined>
  /** `POST /disconnect` with a browser's cookie, as the page's button sends it. */
  disconnect(cookie: string): Promise<Response>
  close(): Promise<void>
}

export interface AppInstanceOptions {
  service: FakeSchedulingService
  tokenStore: TokenStore
  subscriptionStore: SubscriptionStore
  /**
   * The app's public origin, as behind a load balancer: every instance of one app has the same
   * redirect URI and webhook url. Default: this instance's own address.
   */
  publicOrigin?: string
  /** How long a kept token is used before the store is read again. Default 5 000. */
  revalidateMs?: number
  /** The `fetch` of the subscriptions' API calls (to hold or fail some). */
  fetch?: FetchLike
  /** The webhook endpoint's path. Default `/webhooks/scheduling`. */
  webhookPath?: string
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** The key a browser connects: its `uid` cookie (the app's own session), else the account id. */
function keyOf(request: Request, account: { id?: string }): string {
  const uid = /(?:^|;\s*)uid=([^;]+)/.exec(request.headers.get('cookie') ?? '')?.[1]
  return uid ?? String(account.id)
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** Answers a Node request with a Fetch handler's `Response`, `Set-Cookie` headers kept apart. */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  origin: string,
  fetchHandler: (request: Request) => Promise<Response>,
): Promise<void> {
  try {
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await bodyOf(req)
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value)
    const answer = await fetchHandler(
      new Request(`${origin}${req.url}`, {
        method: req.method,
        headers,
        body: body === undefined ? undefined : new Uint8Array(body),
      }),
    )
    const out: Record<string, string | string[]> = {}
    answer.headers.forEach((value, name) => {
      if (name !== 'set-cookie') out[name] = value
    })
    const cookies = answer.headers.getSetCookie()
    if (cookies.length > 0) out['set-cookie'] = cookies
    res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()))
  } catch {
    res.writeHead(500).end()
  }
}

/** The app's pieces for one instance: its tokens, its webhooks' subscriptions, its routes. */
function appParts(options: AppInstanceOptions, origin: string, log: InstanceLog) {
  const { service } = options
  const webhookUrl = `${origin}${options.webhookPath ?? '/webhooks/scheduling'}`
  const redirectUri = `${origin}/auth/scheduling/callback`
  service.allowRedirectUri(redirectUri)
  const onConnectionChange = (change: ConnectionChange) => log.changes.push(change)
  const oauthOptions = {
    clientId: service.clientId,
    clientSecret: service.clientSecret,
    redirectUri,
    authUrl: service.authUrl,
    apiUrl: service.apiUrl,
  }
  const tokens = createTokenManager({
    oauth: createOAuthClient(oauthOptions),
    store: options.tokenStore,
    revalidateMs: options.revalidateMs,
    onConnectionChange,
  })
  const subscriptions = createWebhookSubscriptions({
    url: webhookUrl,
    apiUrl: service.apiUrl,
    tokens,
    store: options.subscriptionStore,
    fetch: options.fetch,
    retry: { attempts: 1 },
    logger: quiet,
    onConnectionChange,
  })
  const routes = createOAuthRoutes<Request>({
    ...oauthOptions,
    tokenStore: options.tokenStore,
    cookieSecret: 'connection-scenarios-cookie-secret-0123456789',
    subscriptions,
    key: keyOf,
    logger: quiet,
    onConnectionChange,
  })
  return { tokens, subscriptions, routes }
}

/** Starts one instance of the app on a port of its own. */
export async function startAppInstance(options: AppInstanceOptions): Promise<AppInstance> {
  const { service } = options
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const origin = options.publicOrigin ?? own
  const log: InstanceLog = { handled: [], changes: [] }
  const { tokens, subscriptions, routes } = appParts(options, origin, log)
  const handler = createWebhookHandler({ subscriptions, logger: quiet }).onAny((event, context) => {
    log.handled.push({
      key: context.account ?? '',
      type: event.type,
      webhookId: context.webhookId ?? '',
    })
  })
  server.on('request', (req, res) =>
    serve(req, res, own, (request) =>
      req.url?.startsWith('/auth/scheduling/') ? routes.fetch(request) : handler.fetch(request),
    ),
  )
  return {
    url: own,
    loginUrl: `${own}/auth/scheduling/login`,
    tokens,
    subscriptions,
    log,
    async me(key) {
      const api = createSchedulingClient({
        baseUrl: service.apiUrl,
        token: { manager: tokens, key },
        retry: { attempts: 1 },
      })
      return String((await api.me<{ id: string }>()).id)
    },
    connectedKey: (cookie) => routes.connectedKey({ cookie }),
    disconnect: (cookie) =>
      fetch(`${own}/auth/scheduling/disconnect`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin, accept: 'application/json' },
      }),
    async close() {
      await tokens.close({ timeoutMs: 1_000 })
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
    },
  }
}
