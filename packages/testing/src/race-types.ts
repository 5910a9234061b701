import type { AuthServiceOptions } from '@scheduling-kit/fake-auth'

// The refresh race's options, its report, and the messages between it and its processes.

/**
 * When the lease holder of a round is stopped:
 * - `before-request`: SIGKILL with the lease taken and the token request not yet sent.
 * - `random`: SIGKILL at a random instant from just before the request to just after the
 *   answer (the server spends the refresh token on arrival).
 * - `after-answer`: SIGKILL with the answer read and the new tokens not yet written: the
 *   crash window. A strict server has then spent the only valid refresh token.
 * - `terminate`: SIGTERM at a random instant; the process closes its token manager
 *   (`close()`) and exits, as the README's shutdown recipe does.
 */
export type RaceStop = 'before-request' | 'random' | 'after-answer' | 'terminate'

export interface RefreshRaceOptions {
  /**
   * A module every process imports, as a path or `file:` URL. Its `createStore()` export (sync
   * or async) makes the store under test, connected to the shared server; an optional
   * `closeStore(store)` export closes the parent's when the race is over; an optional
   * `cutConnection(store)` cuts a store's connection to its server (for `cutStoreAtWrite`).
   */
  storeModule: string | URL
  /** OS processes, each with its own token manager and store client. Default 8. */
  processes?: number
  /** Callers per process asking for the token at once. Default 25. */
  callers?: number
  /** Times the token expires and everyone asks again. Default 5. */
  expiries?: number
  /**
   * In the first round, kill the process that took the lease with SIGKILL, just before its
   * token request: the others must go on once the lease expires. Same as
   * `stop: 'before-request'`, `stopRounds: 1`.
   */
  killLeaseHolder?: boolean
  /** Stop the lease holder of each of the first `stopRounds` rounds, this way. */
  stop?: RaceStop
  /** How many rounds (the first ones) stop their lease holder. Default 1 when `stop` is set. */
  stopRounds?: number
  /**
   * In the first round, the lease holder's first store write after the token endpoint's
   * answer finds its connection cut: the module's `cutConnection(store)` runs, and the write
   * throws. The new tokens must still land.
   */
  cutStoreAtWrite?: boolean
  /** The token endpoint's behaviour (`reuseGraceMs`, `reuseRevokesFamily`). Default: strict. */
  server?: Pick<AuthServiceOptions, 'reuseGraceMs' | 'reuseRevokesFamily'>
  /**
   * The token managers' lease. Default 60 s, or 3 s when a holder is stopped: the others wait
   * that long for a killed holder's lease (a live holder renews it every third of that).
   */
  leaseTtlMs?: number
  /** How long the token endpoint takes to answer a refresh, after it spent the old token. Default 100 ms. */
  refreshLatencyMs?: number
  /** How long one round may take before it is reported as hung. Default 30 s. */
  roundTimeoutMs?: number
}

/** What one expiry brought. */
export interface RefreshRaceRound {
  round: number
  /** Refresh requests the token endpoint received. */
  refreshRequests: number
  /** Refreshes it answered with new tokens. */
  refreshes: number
  /** Callers that got an answer (a killed process's callers get none). */
  callers: number
  /** Each failed caller's error code. */
  errors: string[]
  /** Distinct access tokens the callers got. */
  tokens: number
  /** Whether a process was stopped (killed or terminated) in this round. */
  killed: boolean
  /** Whether the connection was lost at the round's end: its stored refresh token is refused. */
  lost: boolean
  durationMs: number
}

export interface RefreshRaceReport {
  rounds: RefreshRaceRound[]
  /** Every promise the race checks that did not hold, in words; empty when all held. */
  problems: string[]
}

/** @internal The configuration a race process gets. */
export interface ChildConfig {
  authUrl: string
  clientId: string
  clientSecret: string
  redirectUri: string
  key: string
  callers: number
  storeModule: string
  leaseTtlMs: number
}

/** @internal What the lease holder of a round does before its token request, and after the answer. */
export type Hold = 'none' | 'before-request' | 'after-answer' | 'report'

/** @internal */
export type ParentMessage =
  | { type: 'go'; hold: Hold; cut: boolean; offset: number }
  | { type: 'proceed' }
  | { type: 'exit' }

/** @internal */
export type ChildMessage =
  | { type: 'ready' }
  | { type: 'refreshing' }
  | { type: 'answered' }
  | { type: 'done'; results: string[] }
