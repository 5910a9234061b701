import { fromBase64Url, toBase64Url, toBytes, toHexUpper } from '../bytes.js'
import { defaultProvider } from '../crypto/default.js'
import { getHeader, type HeadersInput } from '../headers.js'

/** Cookie values by name, from a `Cookie` header. */
export function parseCookies(headers: HeadersInput): Map<string, string> {
  const cookies = new Map<string, string>()
  for (const part of (getHeader(headers, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    const name = part.slice(0, eq).trim()
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim())
  }
  return cookies
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

/** `payload.signature`, both base64url; the payload is JSON. */
export async function signCookie(name: string, value: unknown, secret: string): Promise<string> {
  const payload = toBase64Url(JSON.stringify(value))
  const mac = await defaultProvider.sign(secret, signingInput(name, payload))
  return `${payload}.${toBase64Url(mac)}`
}

/** The JSON a signed cookie holds, or `undefined` when it is malformed or its signature is wrong. */
export async function readSignedCookie(
  name: string,
  cookie: string | undefined,
  secret: string,
): Promise<unknown> {
  if (cookie === undefined) return undefined
  const dot = cookie.lastIndexOf('.')
  if (dot <= 0) return undefined
  const payload = cookie.slice(0, dot)
  const mac = fromBase64Url(cookie.slice(dot + 1))
  if (mac === undefined || mac.length !== 32) return undefined
  const hex = toHexUpper(mac).toLowerCase()
  if (!(await defaultProvider.verify(secret, signingInput(name, payload), hex))) return undefined
  const json = fromBase64Url(payload)
  if (json === undefined) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(json))
  } catch {
    return undefined
  }
}
