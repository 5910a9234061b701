// The app's one page: the connected account, a disconnect button, and the events the service
// sent, kept up to date without a reload through Server-Sent Events.
import type { Received } from './app.js'

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
export const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ESC[c]!)

export interface Account {
  id?: string
  name?: string
  email?: string
}

/** One event as a table row; the same markup the page's script builds for live events. */
export function eventRow(e: Received): string {
  return (
    `<tr data-id="${esc(e.id)}"><td><code>${esc(e.type)}</code></td><td>${esc(e.occurredAt)}</td>` +
    `<td>${esc(e.attendee ?? '—')}</td><td>${esc(e.state ?? '—')}</td><td>${esc(e.startAt ?? '—')}</td></tr>`
  )
}

// Builds the same row as eventRow, with text nodes (never innerHTML) for what the service sent.
const SCRIPT = `
const rows = document.getElementById('events')
const status = document.getElementById('live')
const source = new EventSource('/api/events/stream')
source.addEventListener('open', () => { status.textContent = 'live'; status.className = 'live' })
source.addEventListener('error', () => { status.textContent = 'reconnecting…'; status.className = '' })
source.addEventListener('webhook', (message) => {
  const e = JSON.parse(message.data)
  if (document.querySelector('tr[data-id="' + CSS.escape(e.id) + '"]')) return
  const tr = document.createElement('tr')
  tr.dataset.id = e.id
  tr.className = 'fresh'
  const code = document.createElement('code')
  code.textContent = e.type
  const first = document.createElement('td')
  first.append(code)
  tr.append(first)
  for (const text of [e.occurredAt, e.attendee || '—', e.state || '—', e.startAt || '—']) {
    const td = document.createElement('td')
    td.textContent = text
    tr.append(td)
  }
  document.getElementById('no-events')?.remove()
  rows.prepend(tr)
})
`

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1f2328}' +
  'table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #d0d7de}' +
  '.card{border:1px solid #d0d7de;border-radius:.5rem;padding:1rem;margin:1rem 0}' +
  '.live{color:#1a7f37}.fresh{animation:flash 1.5s}@keyframes flash{from{background:#fff8c5}}' +
  'button,.button{font:inherit;padding:.4rem .8rem;border-radius:.375rem;border:1px solid #d0d7de;background:#f6f8fa;cursor:pointer;text-decoration:none;color:inherit}'

export function homePage(account: Account | undefined, events: readonly Received[]): string {
  const who = account
    ? `<div class="card"><p id="account">Connected as <strong>${esc(String(account.name ?? account.id))}</strong>` +
      `${account.email ? ` (<span id="account-email">${esc(account.email)}</span>)` : ''}</p>` +
      '<form method="post" action="/auth/scheduling/disconnect"><button id="disconnect">Disconnect</button></form></div>'
    : '<div class="card"><p>No scheduling account is connected.</p>' +
      '<p><a class="button" id="connect" href="/auth/scheduling/login?returnTo=%2F">Connect your scheduling account</a></p></div>'
  const rows =
    events.map(eventRow).join('') ||
    '<tr id="no-events"><td colspan="5">No event yet: send one from the service’s dashboard.</td></tr>'
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
    `<title>Bookings</title><style>${STYLE}</style></head><body><h1>Bookings</h1>${who}` +
    '<h2>Events from the service <small id="live">connecting…</small></h2>' +
    '<table><thead><tr><th>type</th><th>occurred</th><th>attendee</th><th>state</th><th>starts</th></tr></thead>' +
    `<tbody id="events">${rows}</tbody></table><script type="module">${SCRIPT}</script></body></html>`
  )
}
