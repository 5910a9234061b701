import { ApiError, ConfigError } from '../errors.js'
import { type FetchLike, parseJson, send } from '../http.js'
import { withoutTrailingSlashes } from '../paths.js'
import type { TokenManager } from '../tokens/manager.js'

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
}

export interface SchedulingClient {
  /** `GET {baseUrl}/me`: the user the credential belongs to. */
  me<T = SchedulingUser>(): Promise<T>
  /**
   * Calls any endpoint, `path` relative to `baseUrl` (e.g. `/webhooks?page=2`). Resolves to the
   * parsed JSON (the text when it is not JSON, `undefined` when empty); throws `ApiError` on a
   * non-2xx answer.
   */
  request<T = unknown>(path: string, init?: RequestInit): Promise<T>
}

/**
 * A client of the service's HTTP API with a bearer token.
 *
 * @example
 * ```ts
 * const api = createSchedulingClient({ baseUrl: 'https://api.example.com/v1', token: process.env.PAT! })
 * const me = await api.me()
 * const webhooks = await api.request('/webhooks?page=2')
 * ```
 */
export function createSchedulingClient(options: SchedulingClientOptions): SchedulingClient {
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
  const base = withoutTrailingSlashes(options.baseUrl)
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const timeoutMs = options.timeoutMs ?? 30_000
  const maxBodyBytes = options.maxBodyBytes ?? 10 * 1024 * 1024

  async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
    // A path, never a URL: the bearer token must not be sent to another host.
    if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) {
      throw new ConfigError(
        `request: "${String(path)}" must be a path starting with "/", relative to baseUrl.`,
      )
    }
    const method = (init.method ?? 'GET').toUpperCase()
    const what = `${method} ${path.split('?')[0]}`
    let bearer = oauth ? await oauth.manager.getAccessToken(oauth.key) : (token as string)
    for (let attempt = 1; ; attempt++) {
      const headers = new Headers(init.headers)
      headers.set('authorization', `Bearer ${bearer}`)
      if (!headers.has('accept')) headers.set('accept', 'application/json')
      const answer = await send(
        `${base}${path}`,
        { ...init, method, headers },
        { fetch: fetchImpl, timeoutMs, what, maxBodyBytes },
      )
      if (answer.status === 401 && oauth && attempt === 1) {
        // The token may have been revoked or expired early: refresh once, then try again.
        bearer = await oauth.manager.getAccessToken(oauth.key, { rejectedToken: bearer })
        continue
      }
      const body = answer.text === '' ? undefined : (parseJson(answer.text) ?? answer.text)
      if (answer.status < 200 || answer.status >= 300)
        throw new ApiError(answer.status, method, path.split('?')[0]!, body, `${base}${path}`)
      return body as T
    }
  }

  return {
    request,
    me: <T>() => request<T>('/me'),
  }
}
