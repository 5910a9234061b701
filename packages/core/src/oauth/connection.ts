import type { HeadersInput } from '../headers.js'
import { parseCookies, readSignedCookie, serializeCookie, signCookie } from './cookies.js'

/** The signed cookie naming the account this browser connected. */
export const CONNECTION_COOKIE = 'scheduling_connection'
const CONNECTION_MAX_AGE_S = 30 * 24 * 3600

/**
 * The key of the account this browser connected, from the signed connection cookie the
 * callback set; `undefined` when there is none or its signature is wrong. For apps that reach
 * the request but not the routes (an encapsulated Fastify plugin, say).
 *
 * @example
 * ```ts
 * app.get('/me', async (request) => {
 *   const key = await readConnectedKey(request.headers, process.env.COOKIE_SECRET!)
 *   return key ? { connected: key } : { connected: false }
 * })
 * ```
 */
export async function readConnectedKey(
  headers: HeadersInput,
  cookieSecret: string,
): Promise<string | undefined> {
  const value = await readSignedCookie(
    CONNECTION_COOKIE,
    parseCookies(headers).get(CONNECTION_COOKIE),
    cookieSecret,
  )
  const k = (value as { k?: unknown } | undefined)?.k
  return typeof k === 'string' ? k : undefined
}

/** The cookie naming the account just connected. */
export async function connectionCookie(
  key: string,
  cookieSecret: string,
  secure: boolean,
): Promise<string> {
  return serializeCookie(
    CONNECTION_COOKIE,
    await signCookie(CONNECTION_COOKIE, { k: key }, cookieSecret),
    { path: '/', maxAgeSeconds: CONNECTION_MAX_AGE_S, secure },
  )
}

/** The cookie that forgets the connected account. */
export function clearConnectionCookie(secure: boolean): string {
  return serializeCookie(CONNECTION_COOKIE, '', { path: '/', maxAgeSeconds: 0, secure })
}
