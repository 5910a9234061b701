import type { VirtualClock } from './clock.js'
import type { EventsModel } from './events-model.js'
import { TokenModel } from './token-model.js'

// The service as the simulation models it, answering the webhook API in process (a `fetch`):
// each account's webhooks, a latency per request on the virtual clock, a capacity in requests a
// second past which it answers 429 with `Retry-After`, outages answered 503. It counts what it
// answered, by kind, by second and by account. Its token endpoint (`token-model.ts`) shares the
// latency and the outages, not the API's capacity.

export interface ModelWebhook {
  id: string
  url: string
  secret: string
  state: 'active' | 'disabled' | 'deleted'
}

export interface ServiceModelOptions {
  clock: VirtualClock
  /** Each request's time at the service, in ms. */
  latencyMs: number
  /** Requests a second the service answers before it answers 429. */
  capacity: number
  /** Stretches of time (ms) in which every request is answered 503. */
  outages: ReadonlyArray<{ from: number; to: number }>
  /** Each account's Events (`GET /v1/events`), when the run lists them. */
  events?: EventsModel
}

export class ServiceModel {
  readonly #webhooks = new Map<string, ModelWebhook[]>()
  #next = 0
  #second = -1
  #inSecond = 0
  /** Requests answered, by what they were and how. */
  readonly counts = { list: 0, create: 0, delete: 0, events: 0, throttled: 0, unavailable: 0 }
  /** The busiest second's requests (429s included). */
  peakPerSecond = 0
  /** List requests answered 200, by account. */
  readonly listsOf = new Map<string, number>()
  /** When a webhook was made, by account (the last one). */
  readonly createdAt = new Map<string, number>()

  /** The token endpoint. */
  readonly tokens: TokenModel

  constructor(readonly options: ServiceModelOptions) {
    this.tokens = new TokenModel(options.clock)
  }

  /** An account's webhook, made without a request (the simulation's starting state). */
  seed(account: string, url: string): ModelWebhook {
    const webhook: ModelWebhook = {
      id: `wh_${++this.#next}`,
      url,
      secret: `s_${this.#next}`,
      state: 'active',
    }
    this.#webhooks.set(account, [webhook])
    return webhook
  }

  /** The service disables the account's live webhook (failed deliveries, say). */
  disable(account: string): boolean {
    const live = this.#webhooks.get(account)?.find((w) => w.state === 'active')
    if (live === undefined) return false
    live.state = 'disabled'
    return true
  }

  readonly fetch = async (input: string, init?: RequestInit): Promise<Response> => {
    const { clock, latencyMs, capacity, outages } = this.options
    if (new URL(input).pathname === '/oauth/token') {
      await clock.sleep(latencyMs)
      if (outages.some((o) => clock.now() >= o.from && clock.now() < o.to))
        return json(503, { error: 'unavailable' })
      const { status, body } = this.tokens.refresh(new URLSearchParams(String(init?.body ?? '')))
      return json(status, body)
    }
    const second = Math.floor(clock.now() / 1000)
    if (second !== this.#second) {
      this.#second = second
      this.#inSecond = 0
    }
    this.#inSecond++
    this.peakPerSecond = Math.max(this.peakPerSecond, this.#inSecond)
    await clock.sleep(latencyMs)
    if (outages.some((o) => clock.now() >= o.from && clock.now() < o.to)) {
      this.counts.unavailable++
      return json(503, { error: 'unavailable' })
    }
    if (this.#inSecond > capacity) {
      this.counts.throttled++
      return json(429, { error: 'rate_limited' }, { 'retry-after': '1' })
    }
    const auth = new Headers(init?.headers).get('authorization') ?? ''
    const account = auth.replace(/^Bearer tok_/, '')
    const url = new URL(input)
    const method = init?.method ?? 'GET'
    if (method === 'GET' && url.pathname.endsWith('/events') && this.options.events) {
      this.counts.events++
      const entries = this.options.events.list(account, url.searchParams.get('period'))
      return json(200, { entries, metadata: { before: null, after: null, limit: 100 } })
    }
    const own = this.#webhooks.get(account) ?? []
    if (method === 'GET' && url.pathname.endsWith('/webhooks')) {
      this.counts.list++
      this.listsOf.set(account, (this.listsOf.get(account) ?? 0) + 1)
      const entries = own.filter((w) => w.state !== 'deleted').map(({ secret: _, ...w }) => w)
      return json(200, { entries, metadata: { before: null, after: null, limit: 100 } })
    }
    if (method === 'POST' && url.pathname.endsWith('/webhooks')) {
      this.counts.create++
      const body = JSON.parse(String(init?.body ?? '{}')) as { url: string }
      const webhook: ModelWebhook = {
        id: `wh_${++this.#next}`,
        url: body.url,
        secret: `s_${this.#next}`,
        state: 'active',
      }
      this.#webhooks.set(account, [...own, webhook])
      this.createdAt.set(account, clock.now())
      return json(201, webhook)
    }
    const id = /\/webhooks\/([^/]+)$/.exec(url.pathname)?.[1]
    if (method === 'DELETE' && id !== undefined) {
      this.counts.delete++
      const found = own.find((w) => w.id === id)
      if (found === undefined) return json(404, { error: 'not_found' })
      found.state = 'deleted'
      return json(200, { ...found })
    }
    return json(404, { error: 'not_found' })
  }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  })
