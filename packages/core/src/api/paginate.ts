import { ConfigError, InvalidResponseError } from '../errors.js'

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
}

/** The longest list followed: past it, the server's cursors are taken to loop. */
const MAX_PAGES = 100_000

type Requester = <T>(path: string, init?: RequestInit) => Promise<T>

/** Every entry of a cursor-paginated list, fetching each page when the last is used up. */
export async function* paginate<T>(
  request: Requester,
  path: string,
  options: CursorPageOptions = {},
): AsyncGenerator<T, void, undefined> {
  const limit = options.limit ?? 100
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
    throw new ConfigError(`paginate: limit must be a whole number from 1 to 100, got ${limit}.`)
  }
  const [pathname, existing] = path.split('?', 2) as [string, string | undefined]
  const seen = new Set<string>()
  let after = options.after
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams(existing)
    for (const [name, value] of Object.entries(options.query ?? {})) query.set(name, value)
    query.set('limit', String(limit))
    if (after !== undefined) query.set('after', after)
    const body = await request<CursorPage<T>>(`${pathname}?${query}`)
    if (!Array.isArray(body?.entries)) {
      throw new InvalidResponseError(`GET ${pathname}`, 'a list page has no entries array')
    }
    yield* body.entries
    const next = body.metadata?.after
    if (next === null || next === undefined || next === '') return
    if (typeof next !== 'string' || seen.has(next)) {
      throw new InvalidResponseError(`GET ${pathname}`, 'the after cursor repeats an earlier page')
    }
    seen.add(next)
    after = next
  }
}
