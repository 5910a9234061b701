/** What the toolkit knows of the connected account (from `GET /me`); open for the app's use. */
export interface AccountInfo {
  /** The service account's id: which account the key is connected to. */
  id?: string
  [field: string]: unknown
}

/** The tokens of one connection, as kept in a `TokenStore`. */
export interface TokenRecord {
  accessToken: string
  refreshToken: string
  /** When the access token expires, epoch milliseconds (computed at receipt from `expires_in`; a lifetime under a minute is taken as a minute). */
  expiresAt: number
  /**
   * The token type as the server wrote it (`bearer`, `Bearer`): only a token response whose
   * type is `bearer` in any case (RFC 6749 section 5.1) is accepted.
   */
  tokenType: string
  /**
   * The scope the server granted, space-separated, when its token response named one (RFC 6749
   * section 5.1: it may leave it out when it granted what was asked). A refresh answer without
   * a scope keeps this one.
   */
  scope?: string
  /** When the tokens were received, epoch milliseconds: their lifetime is `expiresAt - obtainedAt`. */
  obtainedAt?: number
  /** Set when the refresh token was refused: the user must connect again. */
  reauthorizationRequired?: boolean
  /** The connected account, as the app chose to keep it. */
  account?: AccountInfo
  /**
   * The connection's generation: a new one on every connect (`newConnection`, set by the OAuth
   * routes' callback: a time later than the connection it replaces, and a random nonce); a
   * disconnect deletes the record. The connection cookie names it: a cookie from
   * before a disconnect or a later reconnection no longer counts. Kept as it is by refreshes.
   */
  connection?: string
  /**
   * The app the connection was made for (its token endpoint, API and webhook addresses), set
   * by the callback: `reconcile` leaves records of another app alone.
   */
  app?: ConnectionApp
  /** Anything else the app keeps with the tokens. */
  data?: Record<string, unknown>
  /**
   * Version number, kept by stores that offer `compareAndSet`; others leave it out. Every
   * successful write makes it one greater.
   */
  version?: number
}

/** The part of a record a token response gives. */
export type TokenSet = Pick<
  TokenRecord,
  'accessToken' | 'refreshToken' | 'expiresAt' | 'tokenType' | 'obtainedAt' | 'scope'
>

/** What a connection was made for: the app's addresses when it was connected. */
export interface ConnectionApp {
  /** The token endpoint its tokens come from (and are refreshed at). */
  tokenUrl?: string
  /** The API's address its webhooks are managed at. */
  apiUrl?: string
  /** The webhook endpoint its deliveries go to. */
  webhookUrl?: string
}

/** The lifetime assumed of a record stored without `obtainedAt`: the service's two hours. */
export const DEFAULT_LIFETIME_MS = 7200 * 1000

/** What tells one stored record from another: its version, its state and its access token. */
export function fingerprint(record: TokenRecord): string {
  return `${record.version ?? ''}|${record.reauthorizationRequired ? 1 : 0}|${record.accessToken}`
}

/** A frozen copy of a record, its account too: callers share it. */
export function frozen(record: TokenRecord): TokenRecord {
  const copy = { ...record }
  if (copy.account !== undefined) copy.account = Object.freeze({ ...copy.account })
  return Object.freeze(copy)
}
