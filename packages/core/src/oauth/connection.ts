import type { HeadersInput } from '../http/headers.js'
import type { TokenStore } from '../tokens/store.js'
import {
  type CookieSecrets,
  cookieName,
  parseCookies,
  readSignedCookie,
  serializeCookie,
  signCookie,
  singleCookie,
} from './cookies.js'

/**
 * The signed cookie naming the account this browser connected
 * (`__Host-scheduling_connection` over HTTPS).
 */
export const CONNECTION_COOKIE = 'scheduling_connection'
/** How long a connection cookie lasts, in ms: 30 days, written inside it as well as in Max-Age. */
export const CONNECTION_TTL_MS = 30 * 24 * 3600 * 1000

/** What a connection cookie holds: the store key, this connection's nonce, the expiry. */
interface Connection {
  k: string
  n: string
  e: number
}

function isConnection(value: unknown): value is Connection {
  const v = value as Connection
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.k === 'string' &&
    v.k !== '' &&
    typeof v.n === 'string' &&
    typeof v.e === 'number'
  )
}

export interface ReadConnectionOptions {
  /**
   * Whether the app is served over HTTPS (its redirect URI is `https:`): then only the
   * `__Host-` cookie counts, which no sibling subdomain can plant. Default: the `__Host-`
   * cookie when the browser sent one, else the plain one (set this to `true` in production).
   */
  secure?: boolean
  /**
   * The token store: the cookie then counts only while the stored record is the connection it
   * was made for (a disconnect or a later reconnection ends every older cookie).
   */
  tokenStore?: TokenStore
}

/** The connection a browser's cookie names, checked; `undefined` when it does not count. */
export async function readConnection(
  headers: HeadersInput,
  cookieSecret: CookieSecrets,
  options: ReadConnectionOptions = {},
): Promise<Connection | undefined> {
  const cookies = parseCookies(headers)
  const hostName = cookieName(CONNECTION_COOKIE, true)
  const secure = options.secure ?? cookies.has(hostName)
  const name = cookieName(CONNECTION_COOKIE, secure)
  // A cookie sent twice (one planted with a more specific Path) decides nothing.
  const value = await readSignedCookie(name, singleCookie(cookies, name), cookieSecret)
  if (!isConnection(value) || value.e <= Date.now()) return undefined
  if (options.tokenStore !== undefined) {
    const record = await options.tokenStore.get(value.k)
    if (record?.connection !== value.n) return undefined
  }
  return value
}

/**
 * The key of the account this browser connected, from the signed connection cookie the
 * callback set; `undefined` when there is none, its signature is wrong, it expired, or it was
 * sent twice. With `tokenStore`, also when the account was disconnected or connected again
 * since. For apps that reach the request but not the routes (an encapsulated Fastify plugin,
 * say); the routes' own `connectedKey` checks all of this with their settings.
 *
 * @example
 * ```ts
 * app.get('/me', async (request) => {
 *   const key = await readConnectedKey(request.headers, process.env.COOKIE_SECRET!, { secure: true, tokenStore })
 *   return key ? { connected: key } : { connected: false }
 * })
 * ```
 */
export async function readConnectedKey(
  headers: HeadersInput,
  cookieSecret: CookieSecrets,
  options?: ReadConnectionOptions,
): Promise<string | undefined> {
  return (await readConnection(headers, cookieSecret, options))?.k
}

/** The cookie naming the account just connected, with this connection's nonce and expiry. */
export async function connectionCookie(
  key: string,
  nonce: string,
  cookieSecret: CookieSecrets,
  secure: boolean,
): Promise<string> {
  const name = cookieName(CONNECTION_COOKIE, secure)
  const value: Connection = { k: key, n: nonce, e: Date.now() + CONNECTION_TTL_MS }
  return serializeCookie(name, await signCookie(name, value, cookieSecret), {
    path: '/',
    maxAgeSeconds: CONNECTION_TTL_MS / 1000,
    secure,
  })
}

/** The cookie that forgets the connected account. */
export function clearConnectionCookie(secure: boolean): string {
  return serializeCookie(cookieName(CONNECTION_COOKIE, secure), '', {
    path: '/',
    maxAgeSeconds: 0,
    secure,
  })
}
