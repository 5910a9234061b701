/** What the toolkit knows of the connected account (from `GET /me`); open for the app's use. */
export interface AccountInfo {
  id?: string
  [field: string]: unknown
}

/** The tokens of one connection, as kept in a `TokenStore`. */
export interface TokenRecord {
  accessToken: string
  refreshToken: string
  /** When the access token expires, epoch milliseconds (computed at receipt from `expires_in`). */
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
   * The nonce of the browser connection that stored these tokens (set by the OAuth routes'
   * callback). The connection cookie names it: a cookie from before a disconnect or a later
   * reconnection no longer counts. Kept as it is by refreshes.
   */
  connection?: string
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
