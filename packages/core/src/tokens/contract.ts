import type { ConnectionStatus } from './connection.js'
import type { TokenState } from './machine.js'
import type { TokenRecord } from './record.js'

// What a token manager is to the rest of the app: its methods and the options of a call.

export interface GetTokenOptions {
  /** An access token the API just refused (401): refresh, unless the stored one is already another. */
  rejectedToken?: string
  /**
   * Read the store even when a token is kept in this process (what it reads is kept from then
   * on): for work that must act on the key's current connection, such as its webhooks.
   */
  revalidate?: boolean
  /**
   * `false`: a refresh this call starts makes one token request, without the manager's retries
   * of a transient failure (`retry.attempts`): for a caller that tries again later on its own
   * schedule, as refresh ahead does.
   */
  retry?: false
}

export interface TokenManager {
  /**
   * A valid access token for the connection `key`, refreshed first when due. The token read
   * or refreshed is kept in this process until its refresh time: calls until then read no
   * store. Pass `rejectedToken` after a 401: the store is read again (another process may have
   * refreshed), and the token is refreshed once if the stored one is the refused one.
   */
  getAccessToken(key: string, options?: GetTokenOptions): Promise<string>
  /** The whole record (frozen: callers share it), refreshed first when due; kept like the token. */
  getRecord(key: string, options?: GetTokenOptions): Promise<TokenRecord>
  /** The state machine's state for a key in this process. */
  state(key: string): TokenState
  /**
   * Where the key's connection stands, read from the store (never from this process's memory):
   * `connected`, `needs_reauth` or `disconnected`, with the service account id.
   */
  status(key: string): Promise<ConnectionStatus>
  /**
   * Drops what this process keeps of the key (its token, its refresh state): the next call
   * reads the store. The OAuth routes do this for every manager of their token store at once;
   * call it after writing the store yourself.
   */
  forget(key: string): void
  /** How many keys this process remembers refresh state for (at most `2 * maxTrackedKeys`). */
  readonly trackedKeys: number
  /**
   * Graceful shutdown: refuses new calls (`ClosedError`), lets every refresh under way finish
   * and its tokens be written (a failing store write is retried until it lands), then gives the
   * leases back. Resolves when all is done, or after `timeoutMs` (default 30 000), when a write
   * that still fails is given up: call it on SIGTERM, after the HTTP server stopped taking
   * requests, and exit when it resolves.
   */
  close(options?: { timeoutMs?: number }): Promise<void>
}
