import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ApiEvent } from '../../src/api/events.js'
import {
  CLOCK_ALLOWANCE_MS,
  endsHere,
  firstWindow,
  nextWindow,
  readWhole,
  type WindowState,
  windowStep,
} from '../../src/catch-up/window.js'

// The plan of which listed Events a catch-up reads, by properties: whatever order the service
// lists in, no Event that started since `since` is left unread; a newest-first past listing is
// read only down to `since`; a service that ignores `period` is read once, whole.

const LISTED_AT = Date.UTC(2030, 0, 1)
const HOUR = 3_600_000

const at = (ms: number) => new Date(ms).toISOString()
const eventAt = (n: number, start: number | undefined, length = HOUR): ApiEvent => ({
  id: `event_${n}`,
  ...(start === undefined ? {} : { start_at: at(start), end_at: at(start + length) }),
})

/** Reads one listing page by page as catch-up does: the ids fed, the pages read, the end state. */
function read(state: WindowState, pages: ApiEvent[][], since: number | undefined) {
  const fed: string[] = []
  let read = 0
  for (const page of pages) {
    read++
    for (const event of page) {
      const [next, step] = windowStep(state, event, since, LISTED_AT)
      state = next
      if (step === 'feed') fed.push(event.id)
    }
    if (endsHere(state)) break
  }
  return { fed, pages: read, state }
}

const pagesOf = (events: ApiEvent[], size: number) =>
  Array.from({ length: Math.ceil(events.length / size) }, (_, i) =>
    events.slice(i * size, i * size + size),
  )

/** Past Events: starts up to 400 days before the listing (some with none), lengths up to a day. */
const pastEvents = fc
  .array(
    fc.record({
      start: fc.option(fc.integer({ min: 1, max: 400 * 24 }), { nil: undefined }),
      length: fc.integer({ min: 1, max: 24 * 60 }),
    }),
    { maxLength: 60 },
  )
  .map((xs) =>
    xs.map(({ start, length }, n) =>
      eventAt(n, start === undefined ? undefined : LISTED_AT - start * HOUR, length * 60_000),
    ),
  )
const sinceArb = fc.option(
  fc.integer({ min: 0, max: 400 * 24 }).map((h) => LISTED_AT - h * HOUR),
  { nil: undefined },
)
const startOf = (e: ApiEvent) => Date.parse(String(e.start_at))

const size = fc.integer({ min: 1, max: 8 })
const endedBefore = (e: ApiEvent, since: number | undefined) =>
  since !== undefined && Date.parse(String(e.end_at)) < since

describe('catch-up window', () => {
  it('property: in any order, every Event read is fed unless it ended before since; the listing ends early only after pages that came newest first, the last holding one started before since', () => {
    fc.assert(
      fc.property(pastEvents, sinceArb, size, (listing, since, n) => {
        const pages = pagesOf(listing, n)
        const result = read({ phase: 'past', ordered: true }, pages, since)
        const seen = pages.slice(0, result.pages).flat()
        expect(result.fed).toEqual(seen.filter((e) => !endedBefore(e, since)).map((e) => e.id))
        if (result.pages < pages.length) {
          const starts = seen.map(startOf).filter((t) => !Number.isNaN(t))
          expect(starts).toEqual([...starts].sort((a, b) => b - a))
          expect(pages[result.pages - 1]!.some((e) => startOf(e) < since!)).toBe(true)
          expect(readWhole(result.state)).toBe(false)
        }
      }),
      { numRuns: 1_000 },
    )
  })

  it('property: newest first, the past listing is read down to the page of the first Event that started before since (with one before it), and nothing that started since is missed', () => {
    fc.assert(
      fc.property(pastEvents, sinceArb, size, (events, since, n) => {
        const listing = events
          .filter((e) => e.start_at !== undefined)
          .sort((a, b) => startOf(b) - startOf(a))
        const pages = pagesOf(listing, n)
        const result = read({ phase: 'past', ordered: true }, pages, since)
        // The first old Event with one before it to compare with (the order's evidence).
        const firstOld = listing.findIndex(
          (e, i) => i > 0 && since !== undefined && startOf(e) < since,
        )
        expect(result.pages).toBe(firstOld < 0 ? pages.length : Math.floor(firstOld / n) + 1)
        for (const event of listing)
          if (since === undefined || startOf(event) >= since) expect(result.fed).toContain(event.id)
        expect(readWhole(result.state)).toBe(false)
      }),
      { numRuns: 1_000 },
    )
  })

  it('a past listing seen out of newest-first order is read to its end and reported read whole; an order broken only across the page where it ends is not seen (the documented limit)', () => {
    const since = LISTED_AT - 10 * HOUR
    const [h2, h3, h50, h1] = [2, 3, 50, 1].map((h, n) => eventAt(n, LISTED_AT - h * HOUR))
    const seen = read({ phase: 'past', ordered: true }, [[h2!, h3!], [h50!, h1!], [h50!]], since)
    expect(seen).toMatchObject({ fed: ['event_0', 'event_1', 'event_3'], pages: 3 })
    expect(readWhole(seen.state)).toBe(true)
    const hidden = read({ phase: 'past', ordered: true }, [[h2!, h50!], [h1!]], since)
    expect(hidden).toMatchObject({ fed: ['event_0'], pages: 1 })
  })

  it('pages of one Event, oldest first: the first page gives no evidence of order, so the listing goes on, finds the order broken, and is read whole; none that started since is missed', () => {
    const since = LISTED_AT - 10 * HOUR
    const oldestFirst = [100, 50, 5, 2, 1].map((h, n) => eventAt(n, LISTED_AT - h * HOUR))
    const seen = read({ phase: 'past', ordered: true }, pagesOf(oldestFirst, 1), since)
    expect(seen.pages).toBe(5)
    expect(seen.fed).toEqual(['event_2', 'event_3', 'event_4'])
    expect(readWhole(seen.state)).toBe(true)
    // Newest first, one to a page: ends with the page after the first old one (its evidence).
    const newestFirst = [...oldestFirst].reverse()
    const ordered = read({ phase: 'past', ordered: true }, pagesOf(newestFirst, 1), since)
    expect(ordered.pages).toBe(4)
    expect(readWhole(ordered.state)).toBe(false)
  })

  it('upcoming, then past, then done; an upcoming listing holding an Event long started is the whole list: no past listing follows', () => {
    expect(nextWindow(firstWindow)).toEqual({ phase: 'past', ordered: true })
    expect(nextWindow({ phase: 'past', ordered: true })).toBeUndefined()
    const soon = eventAt(1, LISTED_AT + HOUR)
    const justStarted = eventAt(2, LISTED_AT - CLOCK_ALLOWANCE_MS + 1)
    const longAgo = eventAt(3, LISTED_AT - 40 * 24 * HOUR)
    const filtered = read(firstWindow, [[soon, justStarted]], LISTED_AT - 24 * HOUR)
    expect(filtered).toMatchObject({ fed: ['event_1', 'event_2'], state: firstWindow })
    const ignored = read(firstWindow, [[soon, longAgo], [justStarted]], LISTED_AT - 24 * HOUR)
    expect(ignored).toMatchObject({ fed: ['event_1', 'event_2'], pages: 2 })
    expect(ignored.state.phase).toBe('whole')
    expect(readWhole(ignored.state)).toBe(true)
    expect(nextWindow(ignored.state)).toBeUndefined()
  })
})
