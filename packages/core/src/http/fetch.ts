import {
  InvalidResponseError,
  NetworkError,
  RedirectRefusedError,
  TimeoutError,
} from '../errors/transport.js'
import { meters, since } from '../telemetry/metrics.js'
import {
  type Attributes,
  CLIENT,
  endSpan,
  errorType,
  finishSpan,
  startSpan,
  within,
} from '../telemetry/otel.js'
import { readStream } from './stream.js'

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

export interface SendOptions {
  fetch: FetchLike
  timeoutMs: number
  /** What the request is, for messages: "Token refresh", "GET /me". */
  what: string
  /** Largest answer body read, in bytes. */
  maxBodyBytes: number
}

export interface Answer {
  status: number
  headers: Headers
  text: string
}

/**
 * Sends a request and reads the whole answer within one time-out, never more than
 * `maxBodyBytes` of it. Failures become `NetworkError`, `TimeoutError` or
 * `InvalidResponseError`, none of which carries the request's credentials.
 */
export async function send(url: string, init: RequestInit, options: SendOptions): Promise<Answer> {
  const traced = startSpan(init.method ?? 'GET', {
    kind: CLIENT,
    attributes: clientAttributes(url, init.method ?? 'GET'),
  })
  const m = meters()
  if (traced === undefined && m === undefined) return sendOnce(url, init, options)
  const started = performance.now()
  const attributes: Attributes = {
    'http.request.method': init.method ?? 'GET',
    'server.address': serverAddress(url),
  }
  try {
    const answer = await within(traced, () => sendOnce(url, init, options))
    attributes['http.response.status_code'] = answer.status
    if (answer.status >= 400) attributes['error.type'] = String(answer.status)
    finishSpan(
      traced,
      { 'http.response.status_code': answer.status },
      answer.status >= 400 ? String(answer.status) : undefined,
    )
    return answer
  } catch (error) {
    attributes['error.type'] = errorType(error)
    endSpan(traced, error)
    throw error
  } finally {
    m?.httpDuration.record(since(started), attributes)
  }
}

const parseUrl = (url: string): URL | null => (URL.canParse(url) ? new URL(url) : null)

/** The host a request goes to, for `server.address`. */
function serverAddress(url: string): string {
  const parsed = parseUrl(url)
  return parsed === null ? '' : parsed.hostname
}

/**
 * A client span's attributes (HTTP semantic conventions). `url.full` is the origin and path
 * only: no credentials of the URL, no query.
 */
function clientAttributes(url: string, method: string): Attributes {
  const parsed = parseUrl(url)
  if (parsed === null) return { 'http.request.method': method }
  const port = parsed.port === '' ? (parsed.protocol === 'http:' ? 80 : 443) : Number(parsed.port)
  return {
    'http.request.method': method,
    'server.address': parsed.hostname,
    'server.port': port,
    'url.full': `${parsed.origin}${parsed.pathname}`,
  }
}

async function sendOnce(url: string, init: RequestInit, options: SendOptions): Promise<Answer> {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, options.timeoutMs)
  try {
    let response: Response
    try {
      // Never followed: a redirect would carry the body (client secret, refresh token, code)
      // or the request to an address nobody configured, and its answer would be believed.
      response = await options.fetch(url, {
        ...init,
        redirect: 'manual',
        signal: controller.signal,
      })
    } catch (cause) {
      if (timedOut) throw new TimeoutError(options.what, options.timeoutMs, url)
      throw new NetworkError(options.what, cause, url)
    }
    if (isRedirect(response)) {
      await response.body?.cancel().catch(() => {})
      throw new RedirectRefusedError(
        options.what,
        response.status,
        response.type === 'opaqueredirect' ? null : response.headers.get('location'),
        url,
      )
    }
    try {
      const text = await readText(response, options.maxBodyBytes, options.what)
      return { status: response.status, headers: response.headers, text }
    } catch (cause) {
      if (timedOut) throw new TimeoutError(options.what, options.timeoutMs, url)
      if (cause instanceof InvalidResponseError) throw cause
      throw new NetworkError(options.what, cause, url)
    }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * A redirect answer, or an answer reached through one (a `fetch` option that ignored
 * `redirect: 'manual'`); browsers answer a manual redirect with an opaque one of status 0.
 */
function isRedirect(response: Response): boolean {
  return (
    (response.status >= 300 && response.status < 400) ||
    response.type === 'opaqueredirect' ||
    response.redirected === true
  )
}

async function readText(response: Response, limit: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'))
  if (declared > limit) {
    await response.body?.cancel().catch(() => {})
    throw new InvalidResponseError(what, `the body is larger than ${limit} bytes`, response.status)
  }
  if (response.body === null) return ''
  const bytes = await readStream(response.body, limit)
  if (bytes === undefined) {
    throw new InvalidResponseError(what, `the body is larger than ${limit} bytes`, response.status)
  }
  return new TextDecoder().decode(bytes)
}

/** Parses JSON, or `undefined` when the text is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
