import { defaultProvider } from '../crypto/default.js'
import { ConfigError } from '../errors/errors.js'
import { parseCookies, singleCookie } from '../oauth/cookies.js'
import { randomToken, toHexUpper } from '../platform/bytes.js'
import { header, type PageRequest } from './http.js'

// What stands between a forged request and the delivery page's replay and purge: the page's
// anti-forgery token, made and signed here (never adopted from what a request sends), bound
// to the session `authorize` named; and where the request came from, by `Sec-Fetch-Site` or,
// when a browser does not send it, `Origin` or `Referer`.

export const COOKIE = 'sk_ledger_csrf'

/** A token: 32 hex digits of nonce, a dot, 64 hex digits of HMAC-SHA256. */
const TOKEN = /^[0-9a-f]{32}\.[0-9a-f]{64}$/

/** The keys a page signs its tokens with: the app's (newest first), or one of this process. */
export type PageSecrets = string | readonly string[]

export function pageKeys(secret: PageSecrets | undefined): readonly string[] {
  if (secret === undefined) return [randomToken(32)]
  const keys = typeof secret === 'string' ? [secret] : [...secret]
  if (keys.length === 0 || keys.some((k) => typeof k !== 'string' || k.length < 32))
    throw new ConfigError(
      'createDeliveryPage(): secret must be a string of 32 characters or more (or a list of them, newest first).',
    )
  return keys
}

/** What a token is signed over: its nonce and the session it was made for. */
const signed = (nonce: string, session: string) =>
  `scheduling-kit:delivery-page:${nonce}:${session.length}:${session}`

/** A new token for `session` (`''` when `authorize` named none), signed with the newest key. */
export async function newToken(keys: readonly string[], session: string): Promise<string> {
  const nonce = toHexUpper(globalThis.crypto.getRandomValues(new Uint8Array(16))).toLowerCase()
  const mac = await defaultProvider.sign(keys[0]!, signed(nonce, session))
  return `${nonce}.${toHexUpper(mac).toLowerCase()}`
}

/** Whether `token` is one this page made (under any of its keys) for `session`. */
export async function tokenHolds(
  keys: readonly string[],
  session: string,
  token: string | undefined | null,
): Promise<boolean> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return false
  const nonce = token.slice(0, 32)
  const mac = token.slice(33)
  for (const key of keys)
    if (await defaultProvider.verify(key, signed(nonce, session), mac)) return true
  return false
}

/** The page's token cookie, when it was sent exactly once. */
export function tokenCookie(headers: PageRequest['headers']): string | undefined {
  const value = singleCookie(parseCookies(headers), COOKIE)
  return typeof value === 'string' ? value : undefined
}

/**
 * Whether a POST comes from the page itself. `Sec-Fetch-Site` when the browser sends it;
 * otherwise `Origin`, else `Referer`, must name this host (`Host` or, behind a proxy,
 * `X-Forwarded-Host`); an opaque origin (`null`) is refused. A request with none of the three
 * comes from no browser (the CLI, a script): nothing forges it on a user's behalf, and the
 * token still decides.
 */
export function fromThisPage(headers: PageRequest['headers']): boolean {
  const site = header(headers, 'sec-fetch-site')
  if (site !== undefined) return site === 'same-origin' || site === 'none'
  const from = header(headers, 'origin') ?? header(headers, 'referer')
  if (from === undefined) return true
  let host: string
  try {
    host = new URL(from).host
  } catch {
    return false // `null`, or not a URL
  }
  if (host === '') return false
  const hosts = [header(headers, 'host'), header(headers, 'x-forwarded-host')?.split(',')[0]]
  return hosts.some((h) => h !== undefined && h.trim().toLowerCase() === host)
}
