// Keeping the OAuth callback's secrets out of the app's own HTTP spans: the authorization
// code, the state and the error description reach the callback in its query, and HTTP
// instrumentations record the query (`url.query`, `http.target`, `http.url`, `url.full`).

/** Query parameters of the OAuth routes that no span should hold: the code, the state, the error's words. */
export const OAUTH_REDACTED_PARAMS: readonly string[] = ['code', 'state', 'error_description']

const REDACTED = 'REDACTED'

/** The query (without `?`) with each secret parameter's value replaced; `undefined` when it has none. */
function redactedQuery(query: string): string | undefined {
  let changed = false
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=')
    const rawName = eq < 0 ? part : part.slice(0, eq)
    let name = rawName
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '))
    } catch {
      // A malformed name is compared as it is.
    }
    if (!OAUTH_REDACTED_PARAMS.includes(name)) return part
    changed = true
    return `${rawName}=${REDACTED}`
  })
  return changed ? parts.join('&') : undefined
}

/**
 * A URL, a path with its query, or a bare query with the OAuth callback's secret values
 * (`code`, `state`, `error_description`) replaced by `REDACTED`; anything else unchanged.
 *
 * @example
 * ```ts
 * redactOAuthUrl('/auth/scheduling/callback?code=abc&state=xyz') // '/auth/scheduling/callback?code=REDACTED&state=REDACTED'
 * ```
 */
export function redactOAuthUrl(url: string): string {
  const q = url.indexOf('?')
  const hash = url.indexOf('#', Math.max(q, 0))
  if (q < 0) {
    // A bare query (`url.query` holds no `?`).
    if (url.includes('/') || !url.includes('=')) return url
    return redactedQuery(url) ?? url
  }
  const end = hash < 0 ? url.length : hash
  const query = redactedQuery(url.slice(q + 1, end))
  return query === undefined ? url : `${url.slice(0, q + 1)}${query}${url.slice(end)}`
}

/** The attributes HTTP instrumentations keep a URL or its query in. */
const URL_ATTRIBUTES = ['url.query', 'url.full', 'http.target', 'http.url'] as const

/**
 * A `requestHook` for `@opentelemetry/instrumentation-http` (and any instrumentation whose
 * hook gets the span and a request with a `url` or `path`): when the request's query holds the
 * OAuth callback's `code`, `state` or `error_description`, the span's URL attributes are
 * written again with those values `REDACTED`. Other requests are left alone.
 *
 * @example
 * ```ts
 * import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
 * import { redactOAuthSpan } from '@scheduling-kit/core'
 *
 * new HttpInstrumentation({ requestHook: redactOAuthSpan })
 * ```
 */
export function redactOAuthSpan(
  span: { setAttribute(key: string, value: string): unknown },
  request: unknown,
): void {
  const { url, path } = (request ?? {}) as { url?: unknown; path?: unknown }
  const target = typeof url === 'string' ? url : typeof path === 'string' ? path : undefined
  if (target === undefined || target.indexOf('?') < 0) return
  const redacted = redactOAuthUrl(target)
  if (redacted === target) return
  const query = redacted.slice(redacted.indexOf('?') + 1).split('#')[0]!
  const attributes = (span as { attributes?: Record<string, unknown> }).attributes
  for (const key of URL_ATTRIBUTES) {
    const seen = attributes?.[key]
    if (key === 'url.query') span.setAttribute(key, query)
    else if (typeof seen === 'string') span.setAttribute(key, redactOAuthUrl(seen))
    else if (key === 'http.target') span.setAttribute(key, redacted)
  }
}
