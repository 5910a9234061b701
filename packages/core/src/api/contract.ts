import type { FetchLike } from '../http/fetch.js'
import type { TokenManager } from '../tokens/contract.js'
import type { EventsApi } from './events.js'
import type { CursorPageOptions } from './paginate.js'
import type { ApiRetryOptions } from './retry.js'
import type { WebhooksApi } from './webhooks.js'

// What the API client is to an app: its options and its methods.

/** The user `GET /me` returns. The service has not published its fields. */
export interface SchedulingUser {
  id?: string
  [field: string]: unknown
}

export interface SchedulingClientOptions {
  /** The API's address, with the `/v1` prefix when the service needs it. */
  baseUrl: string
  /** A personal access token, or an OAuth connection kept fresh by a token manager. */
  token: string | { manager: Pick<TokenManager, 'getAccessToken'>; key: string }
  fetch?: FetchLike
  /** Time-out of one request, in ms. Default 30 000. */
  timeoutMs?: number
  /** Largest answer read, in bytes. Default 10 MiB. */
  maxBodyBytes?: number
  /**
   * Retries: a 429 waits what its `Retry-After` asks (up to `maxRetryAfterMs`), else backs off
   * with jitter, and is retried whatever the method (the server did nothing). A 5xx, a time-out
   * or no answer is retried only for GET, HEAD, OPTIONS, PUT and DELETE: a POST that may have
   * landed is never sent again blindly.
   */
  retry?: ApiRetryOptions
}

export interface SchedulingClient {
  /** `GET {baseUrl}/me`: the user the credential belongs to. */
  me<T = SchedulingUser>(): Promise<T>
  /**
   * Calls any endpoint, `path` relative to `baseUrl` (e.g. `/events?state=active`). Resolves to
   * the parsed JSON (the text when it is not JSON, `undefined` when empty); throws `ApiError`
   * on a non-2xx answer, after the retries `retry` allows.
   */
  request<T = unknown>(path: string, init?: RequestInit): Promise<T>
  /**
   * Every entry of a cursor-paginated list (`{ entries, metadata: { after } }`), page after
   * page, following `after` until it is null.
   *
   * @example
   * ```ts
   * for await (const event of api.paginate('/events', { query: { state: 'active' } })) { ... }
   * ```
   */
  paginate<T = unknown>(path: string, options?: CursorPageOptions): AsyncIterable<T>
  /** The account's webhooks: `list()`, `get(id)`, `create({ url })`, `delete(id)`. */
  readonly webhooks: WebhooksApi
  /** The account's events: `list({ state?, period? })`. */
  readonly events: EventsApi
}
