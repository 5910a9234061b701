import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AnyWebhookEvent } from '@scheduling-kit/core'

// The fake service's `GET /v1/events`: each account's Events as they stand now, built from the
// `event.*` webhooks it generated (each one moves its Event to the state it carries), listed as
// the facts page describes: filtered by `state` and `period`, in cursor pages, per account.
// The service publishes no order; this one lists as calendar APIs commonly do: `upcoming`
// soonest first, `past` newest first, and without `period` in the order Events were first seen.

/** An Event as the list shows it: the latest payload an `event.*` webhook carried for it. */
export type ListedEvent = Record<string, unknown> & { id: string; state?: string }

/** A failure the next event lists answer with: 429 (with or without `Retry-After`) or 5xx. */
export interface EventsFailure {
  status: number
  retryAfter?: string
  count?: number
}

const MAX_PAGE = 100

const startOf = (event: ListedEvent): number => Date.parse(String(event.start_at ?? ''))

export class EventBook {
  /** Per account: each Event by id, with the order it was first seen in. */
  readonly #byAccount = new Map<string, Map<string, { event: ListedEvent; seq: number }>>()
  #seq = 0
  readonly #failures: EventsFailure[] = []
  /** Event list requests answered, by status. */
  readonly counters: { requests: number; byStatus: Record<number, number> } = {
    requests: 0,
    byStatus: {},
  }

  constructor(readonly accountOf: (authorization: string | undefined) => string | undefined) {}

  /** Moves the Event an `event.*` webhook names to the state it carries. */
  record(account: string | undefined, event: AnyWebhookEvent): void {
    const payload = event.payload as ListedEvent | undefined
    if (
      account === undefined ||
      !event.type.startsWith('event.') ||
      typeof payload?.id !== 'string'
    )
      return
    let events = this.#byAccount.get(account)
    if (events === undefined) {
      events = new Map()
      this.#byAccount.set(account, events)
    }
    const known = events.get(payload.id)
    events.set(payload.id, { event: structuredClone(payload), seq: known?.seq ?? ++this.#seq })
  }

  /** An account's Events as they stand, in the order first seen. */
  of(account: string): ListedEvent[] {
    return [...(this.#byAccount.get(account)?.values() ?? [])].map((e) => e.event)
  }

  /** The next event lists fail this way; `count: 0` clears the ones queued. */
  fail(failure: EventsFailure): void {
    if (failure.count === 0) this.#failures.length = 0
    else for (let i = 0; i < (failure.count ?? 1); i++) this.#failures.push(failure)
  }

  #answer(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    this.counters.byStatus[status] = (this.counters.byStatus[status] ?? 0) + 1
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body))
  }

  /** Answers `GET /v1/events`; `false` for any other request. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const url = new URL(req.url ?? '/', 'http://x')
    if (req.method !== 'GET' || !/^\/v1\/events\/?$/.test(url.pathname)) return false
    this.counters.requests++
    const account = this.accountOf(req.headers.authorization)
    if (account === undefined) {
      this.#answer(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': 'Bearer error="invalid_token"' },
      )
      return true
    }
    const failure = this.#failures.shift()
    if (failure !== undefined) {
      this.#answer(
        res,
        failure.status,
        { error: failure.status === 429 ? 'rate_limited' : 'server_error' },
        failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter },
      )
      return true
    }
    const page = this.#page(account, url.searchParams)
    if (page === undefined) this.#answer(res, 400, { error: 'invalid_cursor' })
    else this.#answer(res, 200, page)
    return true
  }

  #page(account: string, query: URLSearchParams) {
    const limit = Math.min(MAX_PAGE, Math.max(1, Number(query.get('limit') ?? 20) || 20))
    const state = query.get('state')
    const period = query.get('period')
    const now = Date.now()
    const listed = [...(this.#byAccount.get(account)?.values() ?? [])].filter(({ event }) => {
      if (state !== null && event.state !== state) return false
      const start = startOf(event)
      if (period === 'upcoming' && !(start >= now)) return false
      if (period === 'past' && !(start < now)) return false
      return true
    })
    if (period === 'upcoming')
      listed.sort((a, b) => startOf(a.event) - startOf(b.event) || a.seq - b.seq)
    if (period === 'past')
      listed.sort((a, b) => startOf(b.event) - startOf(a.event) || b.seq - a.seq)
    const after = query.get('after')
    let from = 0
    if (after !== null) {
      const seq = /^ev_(\d+)$/.exec(after)?.[1]
      if (seq === undefined) return undefined
      // Just past the Event the cursor names; if it left the list, past the first seen later.
      const at = listed.findIndex((e) => e.seq === Number(seq))
      from = at >= 0 ? at + 1 : listed.findIndex((e) => e.seq > Number(seq))
      if (from < 0) from = listed.length
    }
    const entries = listed.slice(from, from + limit)
    const last = entries[entries.length - 1]
    return {
      entries: entries.map((e) => e.event),
      metadata: {
        before: from > 0 && entries[0] !== undefined ? `ev_${entries[0].seq}` : null,
        after: from + limit < listed.length && last !== undefined ? `ev_${last.seq}` : null,
        limit,
      },
    }
  }
}
