import type { CursorPageOptions } from './paginate.js'
import { paginate, paginatePages } from './paginate.js'

/** An Event as the API lists it (`GET /v1/events`). Fields beyond `id` are as the service sends them. */
export interface ApiEvent {
  id: string
  state?: string
  start_at?: string
  end_at?: string
  created_at?: string
  canceled_at?: string
  [field: string]: unknown
}

export interface EventListOptions extends Omit<CursorPageOptions, 'query'> {
  /** Only events in this state (`confirmed`, `canceled`, ...). */
  state?: string
  /** The service's `period` filter, passed as given. */
  period?: string
}

export interface EventsApi {
  /** Every event of the account, following the cursor over as many pages as there are. */
  list(options?: EventListOptions): AsyncIterable<ApiEvent>
  /**
   * The same, a page at a time (the next asked for only when the last is used up). Optional in
   * a client of your own: without it, catch-up reads `list` an Event at a time.
   */
  pages?(options?: EventListOptions): AsyncIterable<ApiEvent[]>
}

type Requester = <T>(path: string, init?: RequestInit) => Promise<T>

export function eventsApi(request: Requester): EventsApi {
  return {
    list: (options = {}) => paginate<ApiEvent>(request, '/events', pageOptions(options)),
    pages: (options = {}) => paginatePages<ApiEvent>(request, '/events', pageOptions(options)),
  }
}

function pageOptions({ state, period, ...page }: EventListOptions): CursorPageOptions {
  const query: Record<string, string> = {}
  if (state !== undefined) query.state = state
  if (period !== undefined) query.period = period
  return { ...page, query }
}
