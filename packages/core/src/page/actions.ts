import { fromThisPage, tokenCookie, tokenHolds } from './guard.js'
import { header, json, type PageAnswer, refusal, sameText } from './http.js'
import { back, NOTICE_FIELDS } from './notice.js'
import type { Allowed, BodyOf, LedgerPageOptions, PageLedger } from './options.js'

// The page's two actions, replay and purge: taken only as a form posted from the page itself
// (its own origin, its own signed token bound to the session), then back to the page with a
// notice saying what came of them.

/** What an action needs of the page: its ledger, its options and its signing keys. */
export interface ActionPage {
  ledger: PageLedger
  options: LedgerPageOptions
  keys: readonly string[]
}

/** A replay or a purge: only from this page (its own origin, its own signed token). */
export async function postAction(
  page: ActionPage,
  at: Allowed,
  bodyOf: BodyOf,
): Promise<PageAnswer> {
  const { headers } = at.request
  if (!fromThisPage(headers)) return refusal(403, 'A replay is taken from this page only.')
  const type = (header(headers, 'content-type') ?? '').split(';', 1)[0]!.trim()
  if (type !== 'application/x-www-form-urlencoded') return refusal(415, 'A form post only.')
  const body = await bodyOf()
  if (body === undefined) return refusal(413, 'The form is too large.')
  const form = new URLSearchParams(body)
  const cookie = tokenCookie(headers)
  if (
    cookie === undefined ||
    !sameText(cookie, form.get('csrf') ?? '') ||
    !(await tokenHolds(page.keys, at.session, cookie))
  )
    return refusal(403, 'The page expired: load it again, then replay.')
  if (form.has('purge')) return purge(page.ledger, form, at)
  return replay(page.options, form, at)
}

/** A purge: what retention says is over, or (with `account`) every body of one account. */
async function purge(ledger: PageLedger, form: URLSearchParams, at: Allowed): Promise<PageAnswer> {
  const account = form.get('account') || undefined
  const purged = await ledger.purge(account === undefined ? {} : { account })
  if (at.asJson) return json(200, purged)
  const notice = new URLSearchParams({
    notice: 'purged',
    bodies: String(purged.bodies),
    entries: String(purged.entries),
    ...(purged.marks === undefined ? {} : { marks: String(purged.marks) }),
    ...(account === undefined ? {} : { of: 'account' }),
  })
  return back(notice)
}

/** A replay, then back to the page with what came of it. */
async function replay(
  options: LedgerPageOptions,
  form: URLSearchParams,
  at: Allowed,
): Promise<PageAnswer> {
  const id = form.get('replay')
  const { replay } = options
  if (replay === undefined || id === null || id === '') return refusal(400, 'Nothing to replay.')
  const report = await replay(id, { reason: 'replayed from the delivery page' })
  if (at.asJson) return json(200, report)
  const code = report.replayed === 1 ? 'replayed' : report.queued === 1 ? 'queued' : 'not-replayed'
  const query = new URLSearchParams(at.url.searchParams)
  for (const name of NOTICE_FIELDS) query.delete(name)
  query.set('notice', code)
  return back(query)
}
