import { escapeHtml } from '../http/html.js'
import type { LedgerEntry } from './entry.js'

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

export const COOKIE = 'sk_ledger_csrf'
export const MAX_FORM = 4_096
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
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

export function cookieOf(headers: PageRequest['headers']): string | undefined {
  for (const part of (header(headers, 'cookie') ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2)
    if (name === COOKIE && value !== undefined && /^[0-9a-f]{32}$/.test(value)) return value
  }
  return undefined
}

export const json = (
  status: number,
  value: unknown,
  extra: Record<string, string> = {},
): PageAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS, ...extra },
  body: JSON.stringify(value),
})

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

export function newToken(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}
