// The request-rate cap of a whole app, planned without I/O: a rate between a floor and a
// ceiling that a 429 halves (and a `Retry-After` pauses) and time raises back a tenth of the
// ceiling at a time (additive increase, multiplicative decrease), and the turns it gives out.
// The executor (`rate-cap.ts`) spaces requests by it; a shared store (`rate-store.ts`) keeps
// one `RateTurns` for every instance, computed as `reserveTurn` and `throttleTurns` compute it.

export interface RateLimits {
  /** The most requests a second, and where the rate starts. */
  readonly ceiling: number
  /** The least: a 429 never takes the rate below it. */
  readonly floor: number
  /** How long without a 429 before the rate is raised a step, in ms. */
  readonly raiseEveryMs: number
}

export interface RateState {
  /** Requests a second now. */
  readonly perSecond: number
  /** When the rate last moved (raised, or lowered by a 429), in ms. */
  readonly movedAt: number
  /** No request before this time (a `Retry-After`), in ms. */
  readonly pausedUntil: number
}

/** The longest a `Retry-After` pauses the cap: a hostile or broken answer cannot stop it for good. */
export const MAX_PAUSE_MS = 300_000

export const startRate = (limits: RateLimits, now: number): RateState => ({
  perSecond: limits.ceiling,
  movedAt: now,
  pausedUntil: now,
})

/** A `Retry-After` as a pause: 0 to `MAX_PAUSE_MS`, none for what is not a number of ms. */
export const pauseOf = (retryAfterMs: number | undefined): number =>
  typeof retryAfterMs === 'number' && retryAfterMs > 0
    ? Math.min(MAX_PAUSE_MS, Number.isFinite(retryAfterMs) ? retryAfterMs : MAX_PAUSE_MS)
    : 0

/** After a 429: the rate halved (not below the floor), paused for its `Retry-After` (at most 5 minutes) if any. */
export function throttled(
  state: RateState,
  limits: RateLimits,
  now: number,
  retryAfterMs?: number,
): RateState {
  return {
    perSecond: Math.max(limits.floor, state.perSecond / 2),
    movedAt: now,
    pausedUntil: Math.max(state.pausedUntil, now + pauseOf(retryAfterMs)),
  }
}

/** The rate at `now`: a step of a tenth of the ceiling for each `raiseEveryMs` without a 429. */
export function raised(state: RateState, limits: RateLimits, now: number): RateState {
  const steps = Math.floor((now - state.movedAt) / limits.raiseEveryMs)
  if (steps <= 0 || state.perSecond >= limits.ceiling) return state
  return {
    ...state,
    perSecond: Math.min(limits.ceiling, state.perSecond + (steps * limits.ceiling) / 10),
    movedAt: state.movedAt + steps * limits.raiseEveryMs,
  }
}

/** When the next request may go, given when the last one went. */
export function nextSlot(state: RateState, lastAt: number | undefined, now: number): number {
  const spaced = lastAt === undefined ? now : lastAt + 1_000 / state.perSecond
  return Math.max(now, spaced, state.pausedUntil)
}

/** A rate and the last turn it gave: what a store keeps of a rate shared by instances. */
export interface RateTurns extends RateState {
  /** When the last turn given may go, in ms; undefined before the first. */
  readonly lastAt: number | undefined
}

/**
 * The latest a turn may be set for, from `now`: the longest pause and one spacing at the floor.
 * A turn past it was not given by this plan (a hostile or broken write).
 */
export const latestTurn = (limits: RateLimits, now: number): number =>
  now + MAX_PAUSE_MS + 1_000 / limits.floor

/**
 * A shared rate as read, each number checked: a rate that is not between the floor and the
 * ceiling starts again at the ceiling; a time that is not a number, a move in the future, a
 * pause past the longest, a last turn past `latestTurn` count as absent. So one hostile write
 * costs at most one bounded wait, and a rate of 0 or a pause of a day never stops the cap.
 */
export function saneTurns(
  turns: RateTurns | undefined,
  limits: RateLimits,
  now: number,
): RateTurns | undefined {
  if (turns === undefined) return undefined
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x)
  const { perSecond, movedAt, pausedUntil, lastAt } = turns
  if (!finite(perSecond) || perSecond < limits.floor || perSecond > limits.ceiling) return undefined
  return {
    perSecond,
    movedAt: finite(movedAt) && movedAt <= now ? movedAt : now,
    pausedUntil: finite(pausedUntil) && pausedUntil <= now + MAX_PAUSE_MS ? pausedUntil : now,
    lastAt: finite(lastAt) && lastAt <= latestTurn(limits, now) ? lastAt : undefined,
  }
}

/** The turns of a rate never used: at its ceiling, none given. */
export const startTurns = (limits: RateLimits, now: number): RateTurns => ({
  ...startRate(limits, now),
  lastAt: undefined,
})

/** The next turn (`at`, in ms): the rate raised to `now`, the turn spaced after the last. */
export function reserveTurn(
  turns: RateTurns | undefined,
  limits: RateLimits,
  now: number,
): { turns: RateTurns; at: number } {
  const from = saneTurns(turns, limits, now) ?? startTurns(limits, now)
  const rate = raised(from, limits, now)
  const at = nextSlot(rate, from.lastAt, now)
  return { turns: { ...rate, lastAt: at }, at }
}

/** After a 429: `throttled`, the turns given kept. */
export function throttleTurns(
  turns: RateTurns | undefined,
  limits: RateLimits,
  now: number,
  retryAfterMs?: number,
): RateTurns {
  const from = saneTurns(turns, limits, now) ?? startTurns(limits, now)
  return { ...throttled(from, limits, now, retryAfterMs), lastAt: from.lastAt }
}
