/**
 * The token-refresh state machine, as a pure function: no clock, no I/O. The token manager
 * feeds it events and acts on the state it returns.
 *
 * - `fresh`: the access token is good beyond the refresh margin.
 * - `expiring`: inside the margin: still usable, a refresh should start.
 * - `expired`: past `expiresAt`: not usable until refreshed.
 * - `refreshing`: a refresh is under way.
 * - `retry_wait`: the last refresh failed transiently; no new attempt before `retryAt`.
 * - `reauthorization_required`: the refresh token was refused; only new tokens (the user
 *   connecting again) leave this state.
 */
export type TokenStatus =
  | 'fresh'
  | 'expiring'
  | 'expired'
  | 'refreshing'
  | 'retry_wait'
  | 'reauthorization_required'

export interface TokenState {
  status: TokenStatus
  /** Transient failures in a row. */
  failures: number
  /** With `retry_wait`: the earliest time of the next attempt. */
  retryAt?: number
}

/** The times of the current record. */
export interface TokenTimes {
  now: number
  /** When a refresh becomes due: `expiresAt` less the margin. */
  refreshAt: number
  expiresAt: number
}

export type TokenEvent =
  | ({ type: 'tick' } & TokenTimes)
  | { type: 'refresh_started' }
  | ({ type: 'refresh_succeeded' } & TokenTimes)
  | { type: 'refresh_failed'; reason: 'invalid_grant' }
  | { type: 'refresh_failed'; reason: 'transient'; retryAt: number }
  /** The stored record changed under us: another process refreshed, or the user reconnected. */
  | ({ type: 'record_replaced'; reauthorizationRequired: boolean } & TokenTimes)

export const INITIAL_TOKEN_STATE: TokenState = { status: 'expired', failures: 0 }

function byTime({ now, refreshAt, expiresAt }: TokenTimes): 'fresh' | 'expiring' | 'expired' {
  if (now < refreshAt) return 'fresh'
  return now < expiresAt ? 'expiring' : 'expired'
}

/** The next state. Never mutates its arguments. */
export function transition(state: TokenState, event: TokenEvent): TokenState {
  switch (event.type) {
    case 'tick':
      if (state.status === 'reauthorization_required' || state.status === 'refreshing') return state
      if (state.status === 'retry_wait' && event.now < (state.retryAt ?? 0)) return state
      return { status: byTime(event), failures: state.failures }
    case 'refresh_started':
      if (state.status === 'reauthorization_required') return state
      return { status: 'refreshing', failures: state.failures }
    case 'refresh_succeeded':
      if (state.status === 'reauthorization_required') return state
      return { status: byTime(event), failures: 0 }
    case 'refresh_failed':
      if (event.reason === 'invalid_grant')
        return { status: 'reauthorization_required', failures: 0 }
      if (state.status === 'reauthorization_required') return state
      return { status: 'retry_wait', failures: state.failures + 1, retryAt: event.retryAt }
    case 'record_replaced':
      if (event.reauthorizationRequired) return { status: 'reauthorization_required', failures: 0 }
      return { status: byTime(event), failures: 0 }
  }
}

/** What the manager does in a state. */
export type TokenAction =
  /** Hand out the stored access token. */
  | 'use'
  /** Refresh (or join the refresh under way), then hand out the new token. */
  | 'refresh'
  /** Refreshing is on hold after failures: hand out the old token while it is valid, else fail. */
  | 'hold'
  /** The user must connect again. */
  | 'reauthorize'

export function actionFor(state: TokenState): TokenAction {
  switch (state.status) {
    case 'fresh':
      return 'use'
    case 'expiring':
    case 'expired':
    case 'refreshing':
      return 'refresh'
    case 'retry_wait':
      return 'hold'
    case 'reauthorization_required':
      return 'reauthorize'
  }
}
