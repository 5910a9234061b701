import { textOf } from '../errors/errors.js'
import { escapeHtml } from '../http/html.js'
import type { LedgerEntry } from '../ledger/entry.js'
import type { RecentAnswer, RecentDropped } from '../ledger/recent.js'

// The delivery page's HTML, as a pure function of what it shows: every value escaped whatever
// its type (a store's writer may put anything in an entry), no script, one form per replay
// button carrying the page's anti-forgery token, and no text taken from the URL but the filter.

/** What the last action did, as the page says it: a code and counts, never text from the URL. */
export type PageNotice =
  | { code: 'replayed' | 'queued' | 'not-replayed' }
  | { code: 'purged'; bodies: number; marks?: number; entries: number; account: boolean }

export interface PageView {
  entries: readonly LedgerEntry[]
  /** The filter as the request gave it. */
  filter: { status?: string; account?: string; type?: string }
  /** The query of the next page, when there is one. */
  next?: string
  /** The anti-forgery token every form carries. */
  csrf: string
  /** Whether replay buttons are shown (the page was given `replay`). */
  canReplay: boolean
  /** Requests this process answered without a run, newest first (the first page only). */
  recent?: readonly RecentAnswer[]
  /** Whether the purge form is shown (the page was made with the ledger's purge). */
  canPurge?: boolean
  /** How many answers `recent` no longer holds, per kind. */
  dropped?: RecentDropped
  /** A line above the table: what the last action did. */
  notice?: PageNotice
}

const STATUSES = ['', 'received', 'processing', 'done', 'failed', 'dead', 'stale']

const time = (ms: unknown) =>
  typeof ms === 'number' && Number.isFinite(ms) && Math.abs(ms) <= 8.64e15
    ? new Date(ms).toISOString()
    : text(ms)

const TEXT_MAX = 10_000

/**
 * Any stored value as escaped page text: a string as it is, a number or a boolean as written,
 * anything else as its JSON; bounded.
 */
export function text(value: unknown): string {
  const t = textOf(value)
  return escapeHtml(t.length > TEXT_MAX ? `${t.slice(0, TEXT_MAX)}…` : t)
}

const STATUS_SET = new Set(STATUSES.slice(1))

/**
 * What is wrong with an entry a store handed back, or `undefined` when it has the shape the
 * ledger writes. The page shows a malformed entry as such (no replay button) instead of
 * failing the whole list.
 */
export function malformed(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null) return 'not an object'
  const e = entry as Record<string, unknown>
  if (typeof e.id !== 'string' || e.id === '') return 'id is not a string'
  if (typeof e.type !== 'string') return 'type is not a string'
  if (typeof e.status !== 'string' || !STATUS_SET.has(e.status))
    return "status is not one of the ledger's"
  if (typeof e.attempts !== 'number' || !Number.isSafeInteger(e.attempts) || e.attempts < 0)
    return 'attempts is not a count'
  if (typeof e.source !== 'string') return 'source is not a string'
  if (typeof e.receivedAt !== 'number' || !Number.isFinite(e.receivedAt))
    return 'receivedAt is not a time'
  return undefined
}

function row(entry: LedgerEntry, view: PageView): string {
  const wrong = malformed(entry)
  const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>
  const status = typeof e.status === 'string' && STATUS_SET.has(e.status) ? e.status : 'malformed'
  const cells = [
    `<td class="id">${text(e.id)}</td>`,
    `<td class="type">${text(e.type)}</td>`,
    `<td class="status status-${status}">${wrong === undefined ? status : `malformed: ${escapeHtml(wrong)}`}</td>`,
    `<td class="attempts">${text(e.attempts)}</td>`,
    `<td class="event">${text(e.resourceId)}</td>`,
    `<td class="account">${text(e.account)}</td>`,
    `<td class="source">${text(e.source)}</td>`,
    `<td class="received">${time(e.receivedAt)}</td>`,
    `<td class="error">${text(e.lastError)}</td>`,
  ]
  if (view.canReplay) {
    const button =
      wrong !== undefined
        ? ''
        : `<form method="post" action=""><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><input type="hidden" name="replay" value="${escapeHtml(entry.id)}"><button class="replay" type="submit"${entry.body === undefined ? ` disabled title="${entry.bodyCapped ? 'body not kept: its account kept the most bodies' : 'body past its retention'}"` : ''}>Replay</button></form>`
    cells.push(`<td>${button}</td>`)
  }
  const id = typeof e.id === 'string' ? ` data-id="${escapeHtml(e.id)}"` : ''
  return `<tr${id}${wrong === undefined ? '' : ' class="malformed"'}>${cells.join('')}</tr>`
}

/** Requests answered without a run: refused ones were never verified, so never recorded. */
function recentTable(recent: readonly RecentAnswer[], dropped?: RecentDropped): string {
  if (recent.length === 0) return ''
  const gone =
    dropped === undefined || dropped.refused + dropped.duplicate === 0
      ? ''
      : `<p id="recent-dropped">Earlier answers no longer kept: ${dropped.refused} refused, ${dropped.duplicate} duplicates.</p>`
  const rows = recent.map(
    (a) =>
      `<tr class="recent-${escapeHtml(a.kind)}"><td>${time(a.at)}</td><td class="kind">${escapeHtml(a.kind)}</td><td>${a.status} ${escapeHtml(a.code ?? '')}</td><td class="id">${escapeHtml(a.id ?? '')}</td><td>${escapeHtml(a.type ?? '')}</td><td class="id">${escapeHtml(a.webhookId ?? '')}</td></tr>`,
  )
  return `<h2>Answered without a run (this process, the last ${recent.length})</h2>
<p>Refused requests were never verified, so the ledger does not record them; a duplicate changes no entry. Each kind keeps its own last ones, so refusals never push duplicates out.</p>${gone}
<table id="recent"><thead><tr><th>at</th><th>what</th><th>answer</th><th>id</th><th>type</th><th>webhook (as sent)</th></tr></thead>
<tbody>${rows.join('\n')}</tbody></table>`
}

/** Drops what retention says is over; with an account filter, that account's bodies. */
function purgeForm(view: PageView): string {
  const account = view.filter.account
  const label =
    account === undefined || account === ''
      ? 'Purge what retention says is over'
      : `Purge every body of ${escapeHtml(account)}`
  return `<form id="purge" method="post" action=""><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><input type="hidden" name="purge" value="1">${account ? `<input type="hidden" name="account" value="${escapeHtml(account)}">` : ''}<button type="submit">${label}</button></form>`
}

/** What a notice says. */
export function noticeText(notice: PageNotice): string {
  switch (notice.code) {
    case 'replayed':
      return 'Replayed the delivery: its handlers ran and finished.'
    case 'queued':
      return 'Queued the delivery: the worker replays it and records how it ends.'
    case 'not-replayed':
      return 'The delivery was not replayed: its row tells its status and last error.'
    case 'purged': {
      const marks = notice.marks === undefined ? '' : `, ${notice.marks} marks`
      const of = notice.account ? ' of the account' : ''
      return `Purged ${notice.bodies} bodies${marks} and ${notice.entries} entries${of}.`
    }
  }
}

/** The whole page. */
export function renderPage(view: PageView): string {
  const { filter } = view
  const options = STATUSES.map(
    (s) =>
      `<option value="${s}"${filter.status === s ? ' selected' : ''}>${s === '' ? 'any status' : s}</option>`,
  ).join('')
  const head = [
    'id',
    'type',
    'status',
    'attempts',
    'event',
    'account',
    'source',
    'received',
    'last error',
  ]
  if (view.canReplay) head.push('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Deliveries</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:14px system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}.id,.error{font-family:monospace;word-break:break-all}.status-dead,.status-failed{color:#b00020;font-weight:600}.status-stale{color:#8a6d00}#notice{background:#eef6ee;padding:.5rem}</style>
</head><body>
<h1>Deliveries</h1>
${view.notice === undefined ? '' : `<p id="notice">${escapeHtml(noticeText(view.notice))}</p>`}
<form id="filter" method="get" action="">
<label>Status <select name="status">${options}</select></label>
<label>Account <input name="account" value="${escapeHtml(filter.account ?? '')}"></label>
<label>Type <input name="type" value="${escapeHtml(filter.type ?? '')}"></label>
<button type="submit">Show</button>
</form>
<table id="deliveries"><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead>
<tbody>${view.entries.map((e) => row(e, view)).join('\n')}</tbody></table>
${view.entries.length === 0 ? '<p id="empty">No delivery matches.</p>' : ''}
${view.next === undefined ? '' : `<p><a id="next" href="?${escapeHtml(view.next)}">Older deliveries</a></p>`}
${recentTable(view.recent ?? [], view.dropped)}
${view.canPurge ? purgeForm(view) : ''}
</body></html>`
}
