import { ConfigError } from '../errors/errors.js'
import { InvalidResponseError, ListTooLongError } from '../errors/transport.js'

/** One page of a list: `{ entries, metadata: { before, after, limit } }`. */
export interface CursorPage<T> {
  entries: T[]
  metadata: { before?: string | null; after?: string | null; limit?: number }
}

export interface CursorPageOptions {
  /** Entries per page (the service allows 1 to 100). Default 100: the fewest requests. */
  limit?: number
  /** More query parameters, sent with every page (`state`, `period`, ...). */
  query?: Record<string, string>
  /** Start after this cursor instead of at the first page. */
  after?: string
  /**
   * The most pages read (default 1,000: 100,000 entries at 100 a page). A list that goes on
   * past it ends with a `ListTooLongError` (`list_too_long`) after the entries read.
   */
  maxPages?: number
  /**
   * The longest a list is followed, in ms from its first request (default 120,000): past it,
   * no further page is asked for, and the list ends with a `ListTooLongError`.
   */
  timeoutMs?: number
  /** The clock the time bound reads, in ms. Default `Date.now`. */
  now?: () => number
}

const MAX_PAGES = 1_000
const LIST_TIMEOUT_MS = 120_000

/** The longest `after` cursor followed, in characters: it is sent back in the URL. */
export const MAX_CURSOR_LENGTH = 2048

/** The largest page read, in bytes: 100 entries of a list are far below it. */
export const MAX_PAGE_BYTES = 1024 * 1024

/** Per-request limits a list asks of the client (below the client's own). */
export interface RequestLimits {
  maxBodyBytes?: number
}

type Requester = <T>(path: string, init?: RequestInit, limits?: RequestLimits) => Promise<T>

/**
 * A 53-bit fingerprint of a string (two FNV-1a rounds): what the loop check keeps of each
 * cursor, so that a list's memory does not grow with its cursors' length.
 */
function fingerprint(text: string): number {
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff)
}

/**
 * The fingerprint of the first entry's id, when entries have ids: a page that starts where an
 * earlier one did.
 */
function firstId(entries: unknown[]): number | undefined {
  const first = entries[0] as { id?: unknown } | undefined
  return typeof first?.id === 'string' ? fingerprint(first.id) : undefined
}

/**
 * Every entry of a cursor-paginated list, fetching each page when the last is used up. Holds
 * one page at a time, never more than `MAX_PAGE_BYTES` of it, and a fingerprint of each cursor
 * and first entry: a cursor or a page start seen before ends the list with an error naming the
 * loop, and so does a cursor longer than `MAX_CURSOR_LENGTH`. Bounded in pages (`maxPages`)
 * and time (`timeoutMs`): past either, a `ListTooLongError`.
 */
export async function* paginate<T>(
  request: Requester,
  path: string,
  options: CursorPageOptions = {},
): AsyncGenerator<T, void, undefined> {
  for await (const entries of paginatePages<T>(request, path, options)) yield* entries
}

/**
 * The same list a page at a time: each page's entries as one array, the next page asked for
 * only when the consumer asks for it (a consumer that stops after a page costs no request more).
 */
export async function* paginatePages<T>(
  request: Requester,
  path: string,
  options: CursorPageOptions = {},
): AsyncGenerator<T[], void, undefined> {
  const limit = options.limit ?? 100
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
    throw new ConfigError(`paginate: limit must be a whole number from 1 to 100, got ${limit}.`)
  }
  const maxPages = options.maxPages ?? MAX_PAGES
  const timeoutMs = options.timeoutMs ?? LIST_TIMEOUT_MS
  if (!Number.isSafeInteger(maxPages) || maxPages < 1)
    throw new ConfigError(`paginate: maxPages must be a whole number, 1 or more, got ${maxPages}.`)
  if (!(timeoutMs > 0))
    throw new ConfigError(`paginate: timeoutMs must be a number of ms above 0, got ${timeoutMs}.`)
  const now = options.now ?? Date.now
  const [pathname, existing] = path.split('?', 2) as [string, string | undefined]
  const what = `GET ${pathname}`
  const cursors = new Map<number, number>()
  const starts = new Map<number, number>()
  const started = now()
  let after = options.after
  for (let page = 1; ; page++) {
    if (page > maxPages) throw new ListTooLongError(what, page - 1, `maxPages ${maxPages}`)
    if (page > 1 && now() - started >= timeoutMs)
      throw new ListTooLongError(what, page - 1, `timeoutMs ${timeoutMs}`)
    const query = new URLSearchParams(existing)
    for (const [name, value] of Object.entries(options.query ?? {})) query.set(name, value)
    query.set('limit', String(limit))
    if (after !== undefined) query.set('after', after)
    const body = await request<CursorPage<T>>(`${pathname}?${query}`, undefined, {
      maxBodyBytes: MAX_PAGE_BYTES,
    })
    if (!Array.isArray(body?.entries)) {
      throw new InvalidResponseError(what, `page ${page} has no entries array`)
    }
    const start = firstId(body.entries)
    if (start !== undefined) {
      const earlier = starts.get(start)
      if (earlier !== undefined) throw loop(what, `page ${page} starts where page ${earlier} did`)
      starts.set(start, page)
    }
    const next = body.metadata?.after
    yield body.entries
    if (next === null || next === undefined || next === '') return
    if (typeof next !== 'string') {
      throw new InvalidResponseError(what, `page ${page}'s after cursor is not a string`)
    }
    if (next.length > MAX_CURSOR_LENGTH) {
      throw new InvalidResponseError(
        what,
        `page ${page}'s after cursor is ${next.length} characters, over ${MAX_CURSOR_LENGTH}`,
      )
    }
    const mark = fingerprint(next)
    const earlier = cursors.get(mark)
    if (earlier !== undefined) {
      throw loop(what, `page ${page}'s after cursor is the one page ${earlier} gave`)
    }
    cursors.set(mark, page)
    after = next
  }
}

const loop = (what: string, how: string) =>
  new InvalidResponseError(what, `the list loops (${how}); stopped following it`)
