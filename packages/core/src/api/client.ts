import { ApiError } from '../errors/api.js'
import { ConfigError, isSchedulingError } from '../errors/errors.js'
import { redactValue } from '../errors/redact.js'
import { type FetchLike, parseJson, send } from '../http/fetch.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import { retryAfterMs } from '../http/retry-after.js'
import { sleep } from '../sleep.js'
import { meters } from '../telemetry/metrics.js'
import {
  type Attributes,
  endSpan,
  errorType,
  spanEvent,
  startSpan,
  type Traced,
  within,
} from '../telemetry/otel.js'
import type { SchedulingClient, SchedulingClientOptions, SchedulingUser } from './contract.js'
import { type EventsApi, eventsApi } from './events.js'
import { type CursorPageOptions, paginate, type RequestLimits } from './paginate.js'
import { nextWait, type RetrySettings, retrySettings } from './retry.js'
import { type WebhooksApi, webhooksApi } from './webhooks.js'

export type { SchedulingClient, SchedulingClientOptions, SchedulingUser } from './contract.js'

/** Checks the options; throws `ConfigError` naming the fix. */
function checkOptions(options: SchedulingClientOptions) {
  if (typeof options?.baseUrl !== 'string' || !URL.canParse(options.baseUrl)) {
    throw new ConfigError(
      'createSchedulingClient: baseUrl must be an absolute URL, e.g. https://api.example.com/v1.',
    )
  }
  const { token } = options
  const oauth = typeof token === 'object' && token !== null ? token : undefined
  if (oauth === undefined && (typeof token !== 'string' || token === '')) {
    throw new ConfigError(
      'createSchedulingClient: token must be a personal access token or { manager, key }.',
    )
  }
  if (
    oauth !== undefined &&
    (typeof oauth.manager?.getAccessToken !== 'function' || typeof oauth.key !== 'string')
  ) {
    throw new ConfigError(
      'createSchedulingClient: an OAuth token is { manager, key } with a token manager.',
    )
  }
  return oauth
}

/** What a failed try says about itself: its status when the API answered, else its code. */
function failureAttributes(error: unknown): Attributes {
  if (isSchedulingError(error) && error.code === 'api_error')
    return { 'http.response.status_code': (error as ApiError).status }
  return { 'error.type': errorType(error) }
}

/**
 * A client of the service's HTTP API with a bearer token: retries what is safe to retry,
 * honours `Retry-After`, refreshes an OAuth token once on a 401.
 *
 * @example
 * ```ts
 * const api = createSchedulingClient({ baseUrl: 'https://api.example.com/v1', token: process.env.PAT! })
 * const me = await api.me()
 * for await (const webhook of api.webhooks.list()) console.log(webhook.id, webhook.url)
 * ```
 */
export function createSchedulingClient(options: SchedulingClientOptions): SchedulingClient {
  return new ApiClient(options)
}

/** The API client: one request with its retries and its one refresh, and what is built on it. */
class ApiClient implements SchedulingClient {
  readonly webhooks: WebhooksApi
  readonly events: EventsApi
  readonly #oauth: ReturnType<typeof checkOptions>
  readonly #token: SchedulingClientOptions['token']
  readonly #base: string
  readonly #fetch: FetchLike
  readonly #timeoutMs: number
  readonly #maxBodyBytes: number
  readonly #retry: RetrySettings
  /** `#request`, bound: what pagination and the webhooks API call. */
  readonly #send = <T>(path: string, init?: RequestInit, limits?: RequestLimits) =>
    this.#request<T>(path, init, limits)

  constructor(options: SchedulingClientOptions) {
    this.#oauth = checkOptions(options)
    this.#token = options.token
    this.#base = withoutTrailingSlashes(options.baseUrl)
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.#timeoutMs = options.timeoutMs ?? 30_000
    this.#maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024
    this.#retry = retrySettings(options.retry)
    this.webhooks = webhooksApi(this.#send)
    this.events = eventsApi(this.#send)
  }

  request<T = unknown>(path: string, init?: RequestInit): Promise<T> {
    return this.#request<T>(path, init)
  }

  me<T = SchedulingUser>(): Promise<T> {
    return this.#request<T>('/me')
  }

  paginate<T = unknown>(path: string, options?: CursorPageOptions): AsyncIterable<T> {
    return paginate<T>(this.#send, path, options)
  }

  /** One call in its span, tried again as long as `retry` allows. */
  async #request<T>(path: string, init: RequestInit = {}, limits?: RequestLimits): Promise<T> {
    // A path, never a URL: the bearer token must not be sent to another host.
    if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) {
      throw new ConfigError(
        `request: "${String(path)}" must be a path starting with "/", relative to baseUrl.`,
      )
    }
    const method = (init.method ?? 'GET').toUpperCase()
    const route = path.split('?', 1)[0]!
    const traced = startSpan('scheduling.api.request', {
      attributes: { 'http.request.method': method, 'url.path': route.slice(0, 256) },
    })
    const m = meters()
    const cap = Math.min(this.#maxBodyBytes, limits?.maxBodyBytes ?? this.#maxBodyBytes)
    for (let attempt = 1; ; attempt++) {
      try {
        const value = await within(traced, () => this.#once<T>(path, init, method, traced, cap))
        endSpan(traced)
        return value
      } catch (error) {
        const wait = nextWait(error, method, attempt, this.#retry)
        if (wait === undefined) {
          endSpan(traced, error, failureAttributes(error))
          throw error
        }
        const cause = failureAttributes(error)
        spanEvent(traced, 'scheduling.api.retry', {
          ...cause,
          'scheduling.retry.attempt': attempt,
          'scheduling.retry.wait_ms': wait,
        })
        m?.apiRetries.add(1, { 'http.request.method': method, ...cause })
        await sleep(wait)
      }
    }
  }

  /** One try, with the one refresh a 401 earns an OAuth connection. */
  async #once<T>(
    path: string,
    init: RequestInit,
    method: string,
    traced: Traced | undefined,
    cap: number,
  ): Promise<T> {
    const oauth = this.#oauth
    const what = `${method} ${path.split('?')[0]}`
    let bearer = oauth ? await oauth.manager.getAccessToken(oauth.key) : (this.#token as string)
    for (let refreshed = false; ; refreshed = true) {
      const headers = new Headers(init.headers)
      headers.set('authorization', `Bearer ${bearer}`)
      if (!headers.has('accept')) headers.set('accept', 'application/json')
      const answer = await send(
        `${this.#base}${path}`,
        { ...init, method, headers },
        { fetch: this.#fetch, timeoutMs: this.#timeoutMs, what, maxBodyBytes: cap },
      )
      if (answer.status === 401 && oauth && !refreshed) {
        // The token may have been revoked or expired early: refresh once, then try again.
        spanEvent(traced, 'scheduling.api.token_refused')
        bearer = await oauth.manager.getAccessToken(oauth.key, { rejectedToken: bearer })
        continue
      }
      const body = answer.text === '' ? undefined : (parseJson(answer.text) ?? answer.text)
      if (answer.status >= 200 && answer.status < 300) return body as T
      // An error body quoting the bearer token keeps it out of the error, its logs and spans.
      throw this.#refused(answer, method, path, redactValue(body, [bearer]))
    }
  }

  /** The `ApiError` of a non-2xx answer, saying when a `Retry-After` asks too long a wait. */
  #refused(
    answer: { status: number; headers: Headers },
    method: string,
    path: string,
    body: unknown,
  ): ApiError {
    const wait =
      answer.status === 429 || answer.status === 503
        ? retryAfterMs(answer.headers.get('retry-after'))
        : undefined
    const tooLong = answer.status === 429 && wait !== undefined && wait > this.#retry.maxRetryAfter
    return new ApiError(answer.status, method, path.split('?')[0]!, body, `${this.#base}${path}`, {
      headers: answer.headers,
      retryAfterMs: wait,
      note: tooLong
        ? `The server asks to wait ${Math.ceil(wait / 1000)} s, longer than retry.maxRetryAfterMs: try again later.`
        : undefined,
    })
  }
}
