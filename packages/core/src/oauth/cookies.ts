import { defaultProvider } from '../crypto/default.js'
import { getHeader, type HeadersInput } from '../http/headers.js'
import { fromBase64Url, toBase64Url, toBytes, toHexUpper } from '../platform/bytes.js'

/**
 * The longest `Cookie` header read: far above what browsers send (about 4 KiB a cookie), and a
 * bound on the work a forged one costs. A longer header is read as no cookies at all.
 */
export const MAX_COOKIE_HEADER = 64 * 1024

/**
 * The cookies of a `Cookie` header, each name with every value it was sent with (in order). A
 * name sent twice is how a cookie planted from a sibling host (`Domain=` the parent, a more
 * specific `Path`) shows itself: see `singleCookie`. One pass, no regular expression.
 */
export function parseCookies(headers: HeadersInput): Map<string, string[]> {
  const cookies = new Map<string, string[]>()
  const header = getHeader(headers, 'cookie')
  if (header === undefined || header.length > MAX_COOKIE_HEADER) return cookies
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    const seen = cookies.get(name)
    if (seen === undefined) cookies.set(name, [value])
    else seen.push(value)
  }
  return cookies
}

/**
 * The value of a cookie sent exactly once; `undefined` when it is absent, and `null` when it
 * was sent more than once: which one the browser put first says nothing about which one this
 * app set, so neither is trusted.
 */
export function singleCookie(
  cookies: Map<string, string[]>,
  name: string,
): string | undefined | null {
  const values = cookies.get(name)
  if (values === undefined) return undefined
  return values.length === 1 ? values[0]! : null
}

/**
 * A cookie's name on the wire: over HTTPS with the `__Host-` prefix, which browsers accept only
 * from this very host (Secure, `Path=/`, no `Domain`), so a sibling subdomain cannot plant or
 * shadow it.
 */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name
}

export interface CookieOptions {
  path: string
  maxAgeSeconds: number
  secure: boolean
}

/** A `Set-Cookie` value: always HttpOnly and SameSite=Lax; Secure over HTTPS. */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  return (
    `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; SameSite=Lax` +
    (options.secure ? '; Secure' : '')
  )
}

// The cookie's name is signed with its value, so one signed cookie cannot stand in for another.
const signingInput = (name: string, payload: string) => toBytes(`scheduling-kit:${name}:${payload}`)

/**
 * The cookie secret, or several, newest first: cookies are signed with the first and read
 * with any, so a new secret is put first and an old one dropped once its cookies have expired.
 */
export type CookieSecrets = string | readonly string[]

const secretsOf = (secrets: CookieSecrets): readonly string[] =>
  typeof secrets === 'string' ? [secrets] : secrets

/** `payload.signature`, both base64url; the payload is JSON. Signed with the newest secret. */
export async function signCookie(
  name: string,
  value: unknown,
  secrets: CookieSecrets,
): Promise<string> {
  const payload = toBase64Url(JSON.stringify(value))
  const mac = await defaultProvider.sign(secretsOf(secrets)[0]!, signingInput(name, payload))
  return `${payload}.${toBase64Url(mac)}`
}

/**
 * The JSON a signed cookie holds, or `undefined` when it is malformed or no secret's signature
 * matches.
 */
export async function readSignedCookie(
  name: string,
  cookie: string | undefined | null,
  secrets: CookieSecrets,
): Promise<unknown> {
  if (cookie === undefined || cookie === null) return undefined
  const dot = cookie.lastIndexOf('.')
  if (dot <= 0) return undefined
  const payload = cookie.slice(0, dot)
  const mac = fromBase64Url(cookie.slice(dot + 1))
  if (mac === undefined || mac.length !== 32) return undefined
  const hex = toHexUpper(mac).toLowerCase()
  const input = signingInput(name, payload)
  let signed = false
  for (const secret of secretsOf(secrets)) {
    if (await defaultProvider.verify(secret, input, hex)) {
      signed = true
      break
    }
  }
  if (!signed) return undefined
  const json = fromBase64Url(payload)
  if (json === undefined) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(json))
  } catch {
    return undefined
  }
}
