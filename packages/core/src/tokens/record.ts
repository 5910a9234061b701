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
  /** Token type from the server, `bearer`. */
  tokenType: string
  /** When the tokens were received, epoch milliseconds: their lifetime is `expiresAt - obtainedAt`. */
  obtainedAt?: number
  /** Set when the refresh token was refused: the user must connect again. */
  reauthorizationRequired?: boolean
  /** The connected account, as the app chose to keep it. */
  account?: AccountInfo
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
  'accessToken' | 'refreshToken' | 'expiresAt' | 'tokenType' | 'obtainedAt'
>
