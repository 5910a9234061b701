import { escapeHtml } from '../http/html.js'
import type { LedgerEntry } from './entry.js'
import type { RecentAnswer } from './recent.js'

// The delivery page's HTML, as a pure function of what it shows: every value escaped, no
// script, one form per replay button carrying the page's anti-forgery token.

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
  /** Whether the purge form is shown (the page was made by `ledger.page()`). */
  canPurge?: boolean
  /** A line above the table: what the last action did. */
  notice?: string
}

const STATUSES = ['', 'received', 'processing', 'done', 'failed', 'dead', 'stale']

const time = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : '')

function row(entry: LedgerEntry, view: PageView): string {
  const cells = [
    `<td class="id">${escapeHtml(entry.id)}</td>`,
    `<td class="type">${escapeHtml(entry.type)}</td>`,
    `<td class="status status-${escapeHtml(entry.status)}">${escapeHtml(entry.status)}</td>`,
    `<td class="attempts">${entry.attempts}</td>`,
    `<td class="account">${escapeHtml(entry.account ?? '')}</td>`,
    `<td class="source">${escapeHtml(entry.source)}</td>`,
    `<td class="received">${time(entry.receivedAt)}</td>`,
    `<td class="error">${escapeHtml(entry.lastError ?? '')}</td>`,
  ]
  if (view.canReplay) {
    cells.push(
      `<td><form method="post" action=""><input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}"><input type="hidden" name="replay" value="${escapeHtml(entry.id)}"><button class="replay" type="submit"${entry.body === undefined ? ` disabled title="${entry.bodyCapped ? 'body not kept: its account kept the most bodies' : 'body past its retention'}"` : ''}>Replay</button></form></td>`,
    )
  }
  return `<tr data-id="${escapeHtml(entry.id)}">${cells.join('')}</tr>`
}

/** Requests answered without a run: refused ones were never verified, so never recorded. */
function recentTable(recent: readonly RecentAnswer[]): string {
  if (recent.length === 0) return ''
  const rows = recent.map(
    (a) =>
      `<tr class="recent-${escapeHtml(a.kind)}"><td>${time(a.at)}</td><td class="kind">${escapeHtml(a.kind)}</td><td>${a.status} ${escapeHtml(a.code ?? '')}</td><td class="id">${escapeHtml(a.id ?? '')}</td><td>${escapeHtml(a.type ?? '')}</td><td class="id">${escapeHtml(a.webhookId ?? '')}</td></tr>`,
  )
  return `<h2>Answered without a run (this process, the last ${recent.length})</h2>
<p>Refused requests were never verified, so the ledger does not record them; a duplicate changes no entry.</p>
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

/** The whole page. */
export function renderPage(view: PageView): string {
  const { filter } = view
  const options = STATUSES.map(
    (s) =>
      `<option value="${s}"${filter.status === s ? ' selected' : ''}>${s === '' ? 'any status' : s}</option>`,
  ).join('')
  const head = ['id', 'type', 'status', 'attempts', 'account', 'source', 'received', 'last error']
  if (view.canReplay) head.push('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Deliveries</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:14px system-ui,sans-serif;margin:1.5rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}.id,.error{font-family:monospace;word-break:break-all}.status-dead,.status-failed{color:#b00020;font-weight:600}.status-stale{color:#8a6d00}#notice{background:#eef6ee;padding:.5rem}</style>
</head><body>
<h1>Deliveries</h1>
${view.notice === undefined ? '' : `<p id="notice">${escapeHtml(view.notice)}</p>`}
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
${recentTable(view.recent ?? [])}
${view.canPurge ? purgeForm(view) : ''}
</body></html>`
}
