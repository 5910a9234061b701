import * as api from '@opentelemetry/api'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  idsOf,
  installSdk as install,
  type TestSdk,
} from '../../../../internal/conformance/src/otel.js'
import { createSchedulingClient } from '../../src/api/client.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import { createOAuthRoutes, type OAuthRoutes } from '../../src/oauth/routes.js'
import { MemorySubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import type { WebhookContext } from '../../src/webhooks/context.js'
import type { WebhookHandler } from '../../src/webhooks/contract.js'
import type { AnyWebhookEvent } from '../../src/webhooks/events.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import type { QueueDelivery } from '../../src/webhooks/queue.js'
import { inJobSpan } from '../../src/webhooks/telemetry/job-span.js'
import { useOpenTelemetry } from '../../src/webhooks/telemetry/use.js'
import { deliver, envelope, secretText, serveHandler, sign } from '../helpers.js'

const SECRET = 'whsec_telemetry_0123456789'
let sdk: TestSdk
const installSdk = () => install(useOpenTelemetry)
beforeEach(() => {
  sdk = installSdk()
})
afterEach(() => sdk.shutdown())

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** Serves `handler` on loopback for what `fn` sends it, then closes it. */
async function serving<T>(handler: WebhookHandler, fn: (url: string) => Promise<T>): Promise<T> {
  const served = await serveHandler(handler)
  try {
    return await fn(served.url)
  } finally {
    await served.close()
  }
}

/** The status of one new signed delivery to `url`. */
const deliverNew = async (url: string) =>
  (await deliver(url, JSON.stringify(envelope()), { secret: SECRET })).status

/** An OAuth client of the fake server, on `redirectUri` (default the server's). */
function oauthOf(server: TokenServer, redirectUri = server.redirectUri) {
  return createOAuthClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri,
    authUrl: server.url,
  })
}

/**
 * The whole sign-in through the routes: /login, the server's code for `account` (bound to the
 * sign-in's PKCE challenge), the callback. `beforeCallback` runs between the two.
 */
async function signIn(
  routes: OAuthRoutes<null>,
  server: TokenServer,
  redirectUri: string,
  account: string,
  beforeCallback: () => void = () => {},
) {
  const login = await routes.handle({
    method: 'GET',
    path: '/login',
    headers: {},
    mountPath: '/auth/scheduling',
    raw: null,
  })
  const cookie = String(login!.headers['set-cookie']).split(';')[0]!
  const location = new URL(String(login!.headers.location))
  const state = location.searchParams.get('state')!
  const code = server.issueCode(
    account,
    redirectUri,
    location.searchParams.get('code_challenge') ?? undefined,
  )
  beforeCallback()
  const answer = await routes.handle({
    method: 'GET',
    path: `/callback?code=${code}&state=${state}`,
    headers: { cookie },
    mountPath: '/auth/scheduling',
    raw: null,
  })
  return { answer: answer!, cookie, state, code }
}

describe('a webhook delivery', () => {
  it('is one span with verify, the dedupe claim and each handler under it, and the answer on it', async () => {
    const handler = createWebhookHandler(SECRET, { logger: quiet })
      .on('event.created', () => {})
      .on('event.*', async () => {})
    const served = await serveHandler(handler)
    try {
      const event = envelope()
      const body = JSON.stringify(event)
      expect((await deliver(served.url, body, { secret: SECRET })).status).toBe(200)
      const [delivery] = sdk.named('scheduling.webhook.delivery')
      expect(delivery!.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.route': '/webhooks/scheduling',
        'http.response.status_code': 200,
        'scheduling.webhook.outcome': 'received',
        'scheduling.webhook.id': 'wh_123',
        'scheduling.payload.id': event.id,
        'scheduling.event.type': 'event.created',
      })
      const { traceId, spanId } = idsOf(delivery!)
      const children = sdk.spans().filter((span) => idsOf(span).parent === spanId)
      expect(children.map((span) => span.name).sort()).toEqual([
        'scheduling.webhook.dedupe.claim',
        'scheduling.webhook.handler',
        'scheduling.webhook.handler',
        'scheduling.webhook.verify',
      ])
      for (const child of children) expect(idsOf(child).traceId).toBe(traceId)
      expect(sdk.named('scheduling.webhook.dedupe.claim')[0]!.attributes).toMatchObject({
        'scheduling.dedupe.claim': 'claimed',
      })
      expect(
        sdk
          .named('scheduling.webhook.handler')
          .map((s) => s.attributes['scheduling.handler.index']),
      ).toEqual([0, 1])

      // The retry: answered from the dedupe store, no handler runs.
      sdk.reset()
      expect((await deliver(served.url, body, { secret: SECRET })).status).toBe(200)
      expect(sdk.named('scheduling.webhook.delivery')[0]!.attributes).toMatchObject({
        'scheduling.webhook.outcome': 'duplicate',
      })
      expect(sdk.named('scheduling.webhook.dedupe.claim')[0]!.attributes).toMatchObject({
        'scheduling.dedupe.claim': 'completed',
      })
      expect(sdk.named('scheduling.webhook.handler')).toHaveLength(0)

      // A forgery: refused in verify; the delivery span says so and is not a server error.
      sdk.reset()
      expect((await deliver(served.url, body, { secret: 'not-the-secret' })).status).toBe(401)
      const [refused] = sdk.named('scheduling.webhook.delivery')
      expect(refused!.attributes).toMatchObject({
        'http.response.status_code': 401,
        'scheduling.webhook.outcome': 'refused',
        'error.type': 'signature_invalid',
      })
      expect(refused!.status.code).toBe(api.SpanStatusCode.UNSET)
      expect(sdk.named('scheduling.webhook.verify')[0]!.status.code).toBe(api.SpanStatusCode.ERROR)
    } finally {
      await served.close()
    }
  })

  it('a failing handler fails its span and the delivery’s (500) with error.type, not its message', async () => {
    const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', () => {
      throw new Error('database password is hunter2')
    })
    const served = await serveHandler(handler)
    try {
      expect(
        (await deliver(served.url, JSON.stringify(envelope()), { secret: SECRET })).status,
      ).toBe(500)
      const [delivery] = sdk.named('scheduling.webhook.delivery')
      const [fn] = sdk.named('scheduling.webhook.handler')
      expect(delivery!.status).toEqual({
        code: api.SpanStatusCode.ERROR,
        message: 'handler_failed',
      })
      expect(delivery!.attributes['error.type']).toBe('handler_failed')
      expect(fn!.status.code).toBe(api.SpanStatusCode.ERROR)
      expect(fn!.attributes['error.type']).toBe('Error')
      expect(
        JSON.stringify(sdk.spans().map((s) => [s.attributes, s.events, s.status])),
      ).not.toContain('hunter2')
    } finally {
      await served.close()
    }
  })

  it('metrics: deliveries by code and outcome, handler time by event type, dedupe entries', async () => {
    const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', () => {})
    const served = await serveHandler(handler)
    try {
      const body = JSON.stringify(envelope())
      await deliver(served.url, body, { secret: SECRET })
      await deliver(served.url, body, { secret: SECRET })
      await deliver(served.url, body, { secret: 'forged' })
      const deliveries = await sdk.points('scheduling.webhook.deliveries')
      const count = (attributes: Record<string, unknown>) =>
        deliveries.find((p) => JSON.stringify(p.attributes) === JSON.stringify(attributes))?.value
      expect(
        count({ 'http.response.status_code': 200, 'scheduling.webhook.outcome': 'received' }),
      ).toBe(1)
      expect(
        count({ 'http.response.status_code': 200, 'scheduling.webhook.outcome': 'duplicate' }),
      ).toBe(1)
      expect(
        count({
          'http.response.status_code': 401,
          'scheduling.webhook.outcome': 'refused',
          'error.type': 'signature_invalid',
        }),
      ).toBe(1)
      const handled = await sdk.points('scheduling.webhook.handler.duration')
      expect(handled).toHaveLength(1)
      expect(handled[0]!.attributes).toEqual({ 'scheduling.event.type': 'event.created' })
      expect((handled[0]!.value as { count: number }).count).toBe(1)
      const entries = await sdk.points('scheduling.webhook.dedupe.entries')
      expect(entries.map((p) => p.value)).toEqual([expect.any(Number)])
      expect(entries[0]!.value as number).toBeGreaterThanOrEqual(1)
      expect((await sdk.points('scheduling.webhook.delivery.duration')).length).toBeGreaterThan(0)
    } finally {
      await served.close()
    }
  })
})

describe('across a queue', () => {
  /** A queue in memory that keeps what a durable one would store. */
  function memoryQueue() {
    const jobs: Array<{
      event: AnyWebhookEvent
      context: WebhookContext
      delivery: QueueDelivery
    }> = []
    return {
      jobs,
      messaging: { system: 'memory', destination: 'deliveries' },
      enqueue(event: AnyWebhookEvent, context: WebhookContext, delivery: QueueDelivery) {
        jobs.push({ event, context, delivery: JSON.parse(JSON.stringify(delivery)) })
      },
    }
  }

  async function deliverAndWork(): Promise<void> {
    const queue = memoryQueue()
    const handler = createWebhookHandler(SECRET, { logger: quiet, queue }).on(
      'event.created',
      () => {},
    )
    const served = await serveHandler(handler)
    try {
      expect(
        (await deliver(served.url, JSON.stringify(envelope()), { secret: SECRET })).status,
      ).toBe(200)
    } finally {
      await served.close()
    }
    const [job] = queue.jobs
    expect(job!.delivery.trace?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    // The worker: in another process, so from nothing but what the job holds.
    await api.context.with(api.ROOT_CONTEXT, () =>
      inJobSpan(
        {
          system: 'memory',
          destination: 'deliveries',
          messageId: 'job-1',
          attemptsMade: 0,
          event: job!.event,
          trace: job!.delivery.trace,
        },
        () => handler.dispatch(job!.event, job!.context),
      ),
    )
  }

  function checkTrace(): void {
    const [delivery] = sdk.named('scheduling.webhook.delivery')
    const [send] = sdk.named('send deliveries')
    const [process] = sdk.named('process deliveries')
    const [fn] = sdk.named('scheduling.webhook.handler')
    expect(send!.kind).toBe(api.SpanKind.PRODUCER)
    expect(send!.attributes).toMatchObject({
      'messaging.system': 'memory',
      'messaging.destination.name': 'deliveries',
      'messaging.operation.type': 'send',
    })
    expect(idsOf(send!).parent).toBe(idsOf(delivery!).spanId)
    expect(process!.kind).toBe(api.SpanKind.CONSUMER)
    expect(process!.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.message.id': 'job-1',
      'messaging.message.delivery_count': 1,
    })
    // One trace: the job's span is the send span's child, and links to it.
    expect(idsOf(process!).traceId).toBe(idsOf(delivery!).traceId)
    expect(idsOf(process!).parent).toBe(idsOf(send!).spanId)
    expect(process!.links.map((l) => l.context.spanId)).toEqual([idsOf(send!).spanId])
    expect(idsOf(fn!).parent).toBe(idsOf(process!).spanId)
  }

  it('the enqueue is a send span whose trace context the job carries; the job’s span continues it', async () => {
    await deliverAndWork()
    checkTrace()
  })

  it('without a propagator registered, the trace context still crosses (written as W3C traceparent)', async () => {
    api.propagation.disable()
    await deliverAndWork()
    checkTrace()
  })

  it('an enqueue the queue refuses is counted, and the send span fails', async () => {
    const handler = createWebhookHandler(SECRET, {
      logger: quiet,
      queue: {
        messaging: { system: 'memory', destination: 'down' },
        enqueue: () => Promise.reject(new Error('redis down')),
      },
    })
    const served = await serveHandler(handler)
    try {
      expect(
        (await deliver(served.url, JSON.stringify(envelope()), { secret: SECRET })).status,
      ).toBe(503)
    } finally {
      await served.close()
    }
    expect(sdk.named('send down')[0]!.status.code).toBe(api.SpanStatusCode.ERROR)
    const failures = await sdk.points('scheduling.webhook.enqueue.failures')
    expect(failures.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'messaging.destination.name': 'down' }, 1],
    ])
  })
})

describe('the API, tokens and the OAuth callback', () => {
  let server: TokenServer
  beforeEach(async () => {
    server = await startTokenServer()
  })
  afterEach(() => server.close())

  it('an API request: one span, an HTTP client span per try, the 429 wait as an event; tries timed by status', async () => {
    const token = server.grant('acct_api').access_token
    const client = createSchedulingClient({
      baseUrl: `${server.url}/v1`,
      token,
      retry: { baseDelayMs: 1, maxDelayMs: 1 },
    })
    server.webhooks.failApi({ status: 429, retryAfter: '0' })
    for await (const _ of client.webhooks.list()) {
      // nothing listed
    }
    const [request] = sdk.named('scheduling.api.request')
    expect(request!.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.path': '/webhooks',
    })
    expect(request!.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'scheduling.api.retry',
        {
          'http.response.status_code': 429,
          'scheduling.retry.attempt': 1,
          'scheduling.retry.wait_ms': 0,
        },
      ],
    ])
    const tries = sdk.named('GET')
    expect(tries.map((t) => t.attributes['http.response.status_code'])).toEqual([429, 200])
    for (const t of tries) {
      expect(t.kind).toBe(api.SpanKind.CLIENT)
      expect(idsOf(t).parent).toBe(idsOf(request!).spanId)
      expect(t.attributes['url.full']).toBe(`${server.url}/v1/webhooks`)
    }
    const durations = await sdk.points('http.client.request.duration')
    const statuses = durations.map((p) => p.attributes['http.response.status_code']).sort()
    expect(statuses).toEqual([200, 429])
    const retries = await sdk.points('scheduling.api.retries')
    expect(retries.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'http.request.method': 'GET', 'http.response.status_code': 429 }, 1],
    ])
  })

  function refreshing(store: MemoryTokenStore) {
    return createTokenManager({
      oauth: oauthOf(server),
      store,
      retry: { baseDelayMs: 2, maxDelayMs: 20 },
      lease: { pollMs: 2 },
      invalidGrantWaitMs: 50,
    })
  }

  async function expired(store: MemoryTokenStore, key: string, refreshToken?: string) {
    const granted = server.grant(key)
    const record: TokenRecord = {
      accessToken: granted.access_token,
      refreshToken: refreshToken ?? granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: Date.now() - 1000,
      obtainedAt: Date.now() - 7_200_000,
      account: { id: key },
    }
    await store.set(key, record)
  }

  it('a refresh: the lease, the token request and the store write under one span; counted by outcome and cause', async () => {
    const store = new MemoryTokenStore()
    const tokens = refreshing(store)
    await expired(store, 'acct_r')
    await Promise.all(Array.from({ length: 5 }, () => tokens.getAccessToken('acct_r')))
    const [refresh] = sdk.named('scheduling.token.refresh')
    expect(sdk.named('scheduling.token.refresh')).toHaveLength(1)
    expect(refresh!.attributes).toMatchObject({
      'scheduling.account': 'acct_r',
      'scheduling.refresh.outcome': 'refreshed',
    })
    const under = sdk.spans().filter((s) => idsOf(s).parent === idsOf(refresh!).spanId)
    expect(under.map((s) => s.name).sort()).toEqual([
      'POST',
      'scheduling.token.lease',
      'scheduling.token_store.write',
    ])
    expect(sdk.named('scheduling.token.lease')[0]!.attributes).toMatchObject({
      'scheduling.lease.outcome': 'held',
    })
    expect(sdk.named('POST')[0]!.attributes['url.full']).toBe(`${server.url}/oauth/token`)

    // A refresh token the server does not know: a failure, counted with its cause.
    await expired(store, 'acct_dead', 'not-a-refresh-token')
    await expect(tokens.getAccessToken('acct_dead')).rejects.toMatchObject({
      code: 'reauthorization_required',
    })
    const counted = await sdk.points('scheduling.token.refreshes')
    expect(counted.map((p) => [p.attributes, p.value]).sort()).toEqual(
      [
        [{ 'scheduling.refresh.outcome': 'refreshed' }, 1],
        [{ 'scheduling.refresh.outcome': 'failed', 'error.type': 'invalid_grant' }, 1],
      ].sort(),
    )
    const waits = await sdk.points('scheduling.token.lease.wait')
    expect(waits.map((p) => p.attributes['scheduling.lease.outcome'])).toContain('held')
  })

  it('the OAuth callback: the code exchange, GET /me and the store write under one span', async () => {
    const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
    server.allowRedirectUri(redirectUri)
    const routes = createOAuthRoutes<null>({
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      redirectUri,
      authUrl: server.url,
      tokenStore: new MemoryTokenStore(),
      cookieSecret: 'cookie-secret-0123456789abcdef',
      logger: quiet,
    })
    const { answer } = await signIn(routes, server, redirectUri, 'acct_cb', () => sdk.reset())
    expect(answer.status).toBe(302)
    const [callback] = sdk.named('scheduling.oauth.callback')
    expect(callback!.attributes).toMatchObject({
      'scheduling.account': 'acct_cb',
      'http.response.status_code': 302,
    })
    const under = sdk.spans().filter((s) => idsOf(s).parent === idsOf(callback!).spanId)
    expect(under.map((s) => s.name).sort()).toEqual([
      'scheduling.oauth.identify',
      'scheduling.oauth.token_exchange',
      'scheduling.token_store.get',
      'scheduling.token_store.set',
    ])
    // The exchange's POST and /me's GET are HTTP client spans under their steps.
    const exchange = sdk.named('scheduling.oauth.token_exchange')[0]!
    expect(sdk.named('POST').map((s) => idsOf(s).parent)).toEqual([idsOf(exchange).spanId])
  })

  it('reconcile: one span with its counts; its time and how long ago it last finished', async () => {
    const subscriptions = createWebhookSubscriptions({
      url: 'https://app.example.test/webhooks',
      tokens: { getAccessToken: async () => server.grant('acct_s').access_token },
      apiUrl: `${server.url}/v1`,
      store: new MemorySubscriptionStore(),
      logger: quiet,
    })
    await subscriptions.ensure('acct_s')
    server.webhooks.setState(server.webhooks.all('acct_s')[0]!.id, 'disabled')
    const report = await subscriptions.reconcile()
    expect(report.created).toBe(1)
    const [run] = sdk.named('scheduling.subscriptions.reconcile')
    expect(run!.attributes).toMatchObject({
      'scheduling.reconcile.checked': 1,
      'scheduling.reconcile.created': 1,
      'scheduling.reconcile.failed': 0,
    })
    // The API requests it made are its children's children.
    expect(
      sdk.named('scheduling.api.request').some((s) => idsOf(s).traceId === idsOf(run!).traceId),
    ).toBe(true)
    const accounts = await sdk.points('scheduling.subscriptions.reconcile.accounts')
    expect(accounts.map((p) => [p.attributes, p.value])).toEqual([
      [{ 'scheduling.reconcile.outcome': 'repaired' }, 1],
    ])
    const [age] = await sdk.points('scheduling.subscriptions.reconcile.age')
    expect(age!.value as number).toBeGreaterThanOrEqual(0)
    expect(age!.value as number).toBeLessThan(60)
  })
})

describe('without an SDK, or turned off', () => {
  it('the API with no SDK: deliveries are answered on the unobserved path (no context switch, no propagation)', async () => {
    // With an SDK, the observed path runs the delivery inside its span's context.
    const withSdk = vi.spyOn(api.context, 'with')
    const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', () => {})
    expect(await serving(handler, deliverNew)).toBe(200)
    expect(withSdk).toHaveBeenCalled()
    withSdk.mockRestore()
    await sdk.shutdown()
    useOpenTelemetry(api)
    const switched = vi.spyOn(api.context, 'with')
    const injected = vi.spyOn(api.propagation, 'inject')
    try {
      const queued: QueueDelivery[] = []
      const queueing = createWebhookHandler(SECRET, {
        logger: quiet,
        queue: { enqueue: (_e, _c, delivery) => void queued.push(delivery) },
      })
      expect(await serving(handler, deliverNew)).toBe(200)
      expect(await serving(queueing, deliverNew)).toBe(200)
      expect(switched).not.toHaveBeenCalled()
      expect(injected).not.toHaveBeenCalled()
      expect(queued.map((d) => d.trace)).toEqual([undefined])
    } finally {
      switched.mockRestore()
      injected.mockRestore()
    }
    sdk = installSdk()
    expect(sdk.spans()).toHaveLength(0)
  })

  it('property: whatever method and webhook id header a sender chooses, the attributes hold them as capped printable ASCII', async () => {
    const handler = createWebhookHandler(SECRET, { logger: quiet })
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 3000, unit: 'binary' }),
        fc.oneof(fc.constant('POST'), fc.string({ maxLength: 300, unit: 'binary' })),
        async (webhookId, method) => {
          sdk.reset()
          await handler.handle({
            method,
            path: '/webhooks/scheduling',
            headers: {
              'content-type': 'application/json',
              'x-service-webhook-id': webhookId,
              'x-service-signature': 'sha256=00',
            },
            body: '{}',
          })
          const [delivery] = sdk.named('scheduling.webhook.delivery')
          for (const key of ['scheduling.webhook.id', 'http.request.method']) {
            const value = delivery!.attributes[key]
            if (value === undefined) continue
            expect(String(value).length).toBeLessThanOrEqual(128)
            expect(String(value)).toMatch(/^[\x20-\x7e]*$/)
          }
          expect(delivery!.attributes['http.request.method']).toBeDefined()
        },
      ),
      { numRuns: 200 },
    )
  })

  it('useOpenTelemetry(false): an SDK registered records nothing of scheduling-kit', async () => {
    useOpenTelemetry(false)
    const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', () => {})
    expect(await serving(handler, deliverNew)).toBe(200)
    expect(sdk.spans()).toHaveLength(0)
    expect(await sdk.points('scheduling.webhook.deliveries')).toHaveLength(0)
  })

  it('an SDK registered after the handler was made is used from the next delivery', async () => {
    await sdk.shutdown()
    useOpenTelemetry(api)
    const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', () => {})
    await serving(handler, async (url) => {
      await deliverNew(url)
      sdk = installSdk()
      await deliverNew(url)
    })
    expect(sdk.named('scheduling.webhook.delivery')).toHaveLength(1)
    const counted = await sdk.points('scheduling.webhook.deliveries')
    expect(counted.map((p) => p.value)).toEqual([1])
  })

  it('useOpenTelemetry refuses what is not the API, saying what to pass', () => {
    expect(() => useOpenTelemetry({} as never)).toThrow(
      /import \* as api from "@opentelemetry\/api"/,
    )
  })
})

describe('no secret in any exported span or metric', () => {
  let server: TokenServer
  const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
  beforeEach(async () => {
    server = await startTokenServer({ redirectUri })
  })
  afterEach(() => server.close())

  /** Everything an exporter would send: names, attributes, events, links, statuses, points. */
  async function exported(): Promise<string> {
    const spans = sdk.spans().map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      links: span.links,
      status: span.status,
      resource: span.resource.attributes,
    }))
    const metrics = (await sdk.collect()).scopeMetrics.flatMap((scope) => scope.metrics)
    return JSON.stringify({ spans, metrics })
  }

  it('property: deliveries, the OAuth flow, refreshes and API calls, with secrets of any shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        secretText(),
        secretText(),
        secretText(),
        async (signing, cookieSecret, note) => {
          sdk.reset()
          // Deliveries: handled, duplicate, forged, a handler that throws with the secret in its message.
          const handler = createWebhookHandler(signing, { logger: quiet })
            .on('event.created', () => {})
            .on('event.canceled', () => {
              throw new Error(`failed with ${signing} and ${note}`)
            })
          const served = await serveHandler(handler)
          const bodies: string[] = []
          const signatures: string[] = []
          try {
            for (const type of ['event.created', 'event.canceled']) {
              const body = JSON.stringify(envelope(type, { payload: { note } }))
              bodies.push(body)
              signatures.push(
                sign(body, signing).slice(7),
                sign(body, signing).slice(7).toLowerCase(),
              )
              await deliver(served.url, body, { secret: signing })
              await deliver(served.url, body, { secret: signing })
              await deliver(served.url, body, { secret: `${signing}x` })
            }
          } finally {
            await served.close()
          }
          // The OAuth flow, then a refresh, then API calls with the tokens it got.
          const tokenStore = new MemoryTokenStore()
          const routes = createOAuthRoutes<null>({
            clientId: server.clientId,
            clientSecret: server.clientSecret,
            redirectUri,
            authUrl: server.url,
            tokenStore,
            cookieSecret,
            logger: quiet,
          })
          const {
            answer: callback,
            cookie,
            state,
            code,
          } = await signIn(routes, server, redirectUri, 'acct_p')
          expect(callback.status).toBe(302)
          const stored = (await tokenStore.get('acct_p'))!
          await tokenStore.set('acct_p', { ...stored, expiresAt: Date.now() - 1 })
          const tokens = createTokenManager({
            oauth: oauthOf(server, redirectUri),
            store: tokenStore,
          })
          const client = createSchedulingClient({
            baseUrl: `${server.url}/v1`,
            token: { manager: tokens, key: 'acct_p' },
            retry: { baseDelayMs: 1, maxDelayMs: 1 },
          })
          server.webhooks.failApi({ status: 429, retryAfter: '0' })
          await client.webhooks.create({ url: 'https://app.example.test/hook' })
          await client.me()
          const refreshed = (await tokenStore.get('acct_p'))!
          expect(refreshed.accessToken).not.toBe(stored.accessToken)

          const text = await exported()
          expect(sdk.named('scheduling.webhook.delivery')).toHaveLength(6)
          expect(sdk.named('scheduling.oauth.callback')).toHaveLength(1)
          expect(sdk.named('scheduling.token.refresh')).toHaveLength(1)
          const grants = server.tokenRequests.flatMap((r) => [r.form.code, r.form.refresh_token])
          const secrets = [
            signing,
            cookieSecret,
            note,
            server.clientSecret,
            code,
            state,
            cookie.split('=')[1]!,
            stored.accessToken,
            stored.refreshToken,
            refreshed.accessToken,
            refreshed.refreshToken,
            ...signatures,
            ...bodies,
            ...grants.filter((g): g is string => g !== undefined),
          ]
          for (const secret of secrets) expect(text).not.toContain(secret)
        },
      ),
      { numRuns: 10 },
    )
  })
})

describe('an SDK that throws', () => {
  /** The API, with a tracer and a meter whose every call throws where `where` says. */
  function throwingApi(where: 'start' | 'end') {
    const boom = () => {
      throw new Error('the SDK failed')
    }
    const span = {
      isRecording: () => true,
      spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }),
      setAttribute: boom,
      setAttributes: boom,
      setStatus: boom,
      addEvent: boom,
      end: boom,
    }
    const tracer = { startSpan: where === 'start' ? boom : () => span }
    const instrument = { add: boom, record: boom, addCallback: () => {} }
    const meter = {
      createCounter: () => instrument,
      createHistogram: () => instrument,
      createObservableGauge: () => instrument,
    }
    return {
      ...api,
      trace: { ...api.trace, getTracer: () => tracer, setSpan: api.trace.setSpan },
      metrics: {
        getMeterProvider: () => ({ getMeter: where === 'start' ? boom : () => meter }),
      },
    }
  }

  it.each(['start', 'end'] as const)(
    'failing at %s: every delivery is answered as without telemetry; handlers run once; API calls and refreshes work',
    async (where) => {
      await sdk.shutdown()
      useOpenTelemetry(throwingApi(where) as never)
      const ran: string[] = []
      const handler = createWebhookHandler(SECRET, { logger: quiet }).on('event.created', (e) => {
        ran.push(e.id)
      })
      const served = await serveHandler(handler)
      const server = await startTokenServer()
      try {
        const body = JSON.stringify(envelope())
        expect((await deliver(served.url, body, { secret: SECRET })).status).toBe(200)
        expect((await deliver(served.url, body, { secret: SECRET })).json).toMatchObject({
          duplicate: true,
        })
        expect((await deliver(served.url, body, { secret: 'forged' })).status).toBe(401)
        expect(ran).toHaveLength(1)
        const store = new MemoryTokenStore()
        const granted = server.grant('acct_t')
        await store.set('acct_t', {
          accessToken: granted.access_token,
          refreshToken: granted.refresh_token,
          tokenType: 'bearer',
          expiresAt: Date.now() - 1,
          account: { id: 'acct_t' },
        })
        const tokens = createTokenManager({
          oauth: oauthOf(server),
          store,
        })
        const client = createSchedulingClient({
          baseUrl: `${server.url}/v1`,
          token: { manager: tokens, key: 'acct_t' },
          retry: { baseDelayMs: 1, maxDelayMs: 1 },
        })
        server.webhooks.failApi({ status: 429, retryAfter: '0' })
        await client.webhooks.create({ url: 'https://app.example.test/hook' })
        expect(server.counters.refresh).toBe(1)
      } finally {
        await served.close()
        await server.close()
        useOpenTelemetry(false)
      }
    },
  )
})
