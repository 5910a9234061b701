import type { ApiEvent } from '../api/events.js'

// Which listed Events a catch-up reads, planned without I/O. What an outage can have changed is
// what is yet to start (`period=upcoming`) and what started since `since` (`period=past`). The
// service publishes no order for its lists: the past listing ends with the page where an Event
// that started before `since` shows, if every Event read up to that page's end came newest
// first and one came before it to compare with; any Event out of that order means the listing
// is read to its end. A service that
// ignores `period` (its upcoming listing holds an Event that started well before the listing)
// is read once, whole, as a listing without filters.

/** Which listing is being read: the upcoming Events, the past ones, or everything at once. */
export type ListingPhase = 'upcoming' | 'past' | 'whole'

/** Where the reading of one account stands. */
export interface WindowState {
  readonly phase: ListingPhase
  /** In the past listing: the start of the last Event read, while they have come newest first. */
  readonly lastStart?: number
  /** False once the past listing was seen out of newest-first order: it is read to the end. */
  readonly ordered: boolean
  /** An Event that started before `since` was read in order: the listing ends with this page. */
  readonly ending?: boolean
}

/** What to do with a listed Event: compare and feed it, or pass over it. */
export type WindowStep = 'feed' | 'skip'

/**
 * How far before the listing an "upcoming" Event may have started before the filter is taken
 * as ignored: the service's clock and ours disagree by less than this.
 */
export const CLOCK_ALLOWANCE_MS = 60 * 60_000

/** The first listing of an account. */
export const firstWindow: WindowState = { phase: 'upcoming', ordered: true }

const timeOf = (text: unknown): number => (typeof text === 'string' ? Date.parse(text) : Number.NaN)

/**
 * One listed Event's step. `since` (ms, or undefined for no bound) skips Events that ended
 * before it, and ends a newest-first past listing with the page of the first one that started
 * before it (`endsHere`); `listedAt` is when the listing began, on our clock.
 */
export function windowStep(
  state: WindowState,
  event: ApiEvent,
  since: number | undefined,
  listedAt: number,
): [WindowState, WindowStep] {
  const start = timeOf(event.start_at)
  const endedBefore = since !== undefined && timeOf(event.end_at) < since
  if (state.phase === 'upcoming') {
    // An Event long started is no upcoming one: the service ignores `period`, so this one
    // listing holds everything, and the past one is not asked for.
    if (start < listedAt - CLOCK_ALLOWANCE_MS)
      return windowStep(wholeWindow, event, since, listedAt)
    return [state, endedBefore ? 'skip' : 'feed']
  }
  if (state.phase === 'whole' || Number.isNaN(start)) return [state, endedBefore ? 'skip' : 'feed']
  const ordered = state.ordered && (state.lastStart === undefined || start <= state.lastStart)
  if (!ordered) return [unordered, endedBefore ? 'skip' : 'feed']
  // In order, and started before `since`: so is everything after it, if the order holds. Only
  // with evidence of the order, an Event read before it to compare with (on this page or the
  // last): a listing whose first Event is already old (one to a page, oldest first) gives none,
  // and is read on until it does, or to its end.
  if (since !== undefined && start < since && state.lastStart !== undefined)
    return [
      { phase: 'past', ordered, lastStart: start, ending: true },
      endedBefore ? 'skip' : 'feed',
    ]
  return [{ phase: 'past', ordered, lastStart: start }, endedBefore ? 'skip' : 'feed']
}

/** True when the listing ends with the page just read: the rest of the past came in order. */
export const endsHere = (state: WindowState): boolean => state.ending === true && state.ordered

const wholeWindow: WindowState = { phase: 'whole', ordered: true }
const unordered: WindowState = { phase: 'past', ordered: false }

/** The listing after one read to its end (or stopped): the past after the upcoming, then none. */
export function nextWindow(state: WindowState): WindowState | undefined {
  return state.phase === 'upcoming' ? { phase: 'past', ordered: true } : undefined
}

/** True when an account's listing had to be read whole (no `period` filter, or no order). */
export const readWhole = (state: WindowState): boolean => state.phase === 'whole' || !state.ordered
