import type { PageNotice } from './html.js'
import { type PageAnswer, SECURITY_HEADERS } from './http.js'

// What the page says after an action: a notice in the query it redirects to, read back when
// the page is shown; only codes and counts it knows, so a crafted query shows nothing.

/** The query fields a notice takes: dropped from the page's own query before it is set again. */
export const NOTICE_FIELDS = ['notice', 'bodies', 'entries', 'marks', 'of'] as const

/** A count as a notice carries it, or `undefined` when it is not one. */
function count(text: string | null): number | undefined {
  if (text === null || !/^\d{1,15}$/.test(text)) return undefined
  return Number(text)
}

/** What the query's notice says: a code and counts; anything else shows no notice at all. */
export function noticeOf(q: URLSearchParams): PageNotice | undefined {
  const code = q.get('notice')
  if (code === 'replayed' || code === 'queued' || code === 'not-replayed') return { code }
  if (code !== 'purged') return undefined
  const bodies = count(q.get('bodies'))
  const entries = count(q.get('entries'))
  const marks = count(q.get('marks'))
  if (bodies === undefined || entries === undefined) return undefined
  return {
    code,
    bodies,
    entries,
    account: q.get('of') === 'account',
    ...(marks === undefined ? {} : { marks }),
  }
}

/** Back to the page after an action, with a notice saying what it did. */
export function back(query: URLSearchParams): PageAnswer {
  return {
    status: 303,
    headers: { location: `?${query.toString()}`, ...SECURITY_HEADERS },
    body: '',
  }
}
