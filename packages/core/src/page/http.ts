import { escapeHtml } from '../http/html.js'
import type { LedgerEntry } from '../ledger/entry.js'
import { concat } from '../platform/bytes.js'

// The delivery page's HTTP: its answers with their security headers, its anti-forgery cookie,
// and what it reads of a request.

/** What `authorize` is told of a request to the page. */
export interface PageRequest {
  method: string
  /** The path and query as requested. */
  url: string
  headers: Record<string, string | string[] | undefined>
}

/** An answer in plain data. */
export interface PageAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** The largest form the page reads: a larger body is refused (413) unread past this. */
export const MAX_FORM = 4_096
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  // `same-origin`: the page's own form posts carry its `Referer` and `Origin` (under
  // `no-referrer` a browser sends `Origin: null`), which a browser without `Sec-Fetch-Site`
  // is checked by; nothing leaves for another site.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
}

/** Whether two strings are equal, in time that depends on their length only. */
export function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

export function header(headers: PageRequest['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

export const json = (
  status: number,
  value: unknown,
  extra: Record<string, string> = {},
): PageAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...extra },
  body: JSON.stringify(value, plain),
})

/** A value a store's writer put where JSON cannot go (a bigint), as text. */
const plain = (_key: string, value: unknown) =>
  typeof value === 'bigint' ? value.toString() : value

/** An entry as the page's JSON shows it: everything but the body (personal data, sealed or not). */
export const shown = ({ body: _body, bodyExpiresAt, ...entry }: LedgerEntry) => ({
  ...entry,
  bodyKept: bodyExpiresAt !== undefined,
})

export const wantsJson = (headers: PageRequest['headers']) =>
  (header(headers, 'accept') ?? '').includes('application/json')

export const html = (
  status: number,
  body: string,
  extra: Record<string, string> = {},
): PageAnswer => ({
  status,
  headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...extra },
  body,
})

export const refusal = (status: number, text: string) =>
  html(status, `<!doctype html><title>${status}</title><p id="refused">${escapeHtml(text)}</p>`)

/**
 * A Fetch request's body as text, read only up to `max` bytes: `undefined` when it is longer
 * (announced or sent), and the rest is never read.
 */
export async function boundedText(request: Request, max: number): Promise<string | undefined> {
  const announced = Number(request.headers.get('content-length') ?? 0)
  if (!(announced <= max)) return undefined
  if (request.body === null) return ''
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      return undefined
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(concat(chunks, size))
}

/** A Node request's form, read up to `MAX_FORM` bytes: `undefined` past it (the rest unread). */
export async function nodeForm(
  req: AsyncIterable<Uint8Array | string> & { headers: PageRequest['headers'] },
): Promise<string | undefined> {
  const announced = Number(header(req.headers, 'content-length') ?? 0)
  if (!(announced <= MAX_FORM)) return undefined
  const decoder = new TextDecoder()
  let body = ''
  let size = 0
  for await (const chunk of req) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk
    size += bytes.byteLength
    if (size > MAX_FORM) return undefined
    body += decoder.decode(bytes, { stream: true })
  }
  return body + decoder.decode()
}

/** A request's path and query under a base of its own; leading slashes folded into one. */
export function parsedPath(path: string): URL | undefined {
  try {
    return new URL(`http://page.invalid/${path.replace(/^[/\\]+/, '')}`)
  } catch {
    return undefined
  }
}
