import { EVENT_TYPES } from '@scheduling-kit/core'
import type { AccountGrants } from '@scheduling-kit/fake-auth'
import type { DeliveryAttempt, Webhook } from './service-types.js'

/** What the dashboard shows: the service's state, read at each page load. */
export interface DashboardState {
  webhooks: ReadonlyArray<Pick<Webhook, 'id' | 'url' | 'events' | 'state' | 'account'>>
  deliveries: readonly DeliveryAttempt[]
  accounts: readonly AccountGrants[]
  /** A line to show above everything, after a button was pressed. */
  notice?: string
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }
const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ESC[c]!)

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1f2328}' +
  'table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #d0d7de}' +
  '.ok{color:#1a7f37}.fail{color:#cf222e}.notice{background:#ddf4ff;padding:.5rem .75rem;border-radius:.375rem}' +
  'form.inline{display:inline}code{font-size:.85rem}pre{white-space:pre-wrap;word-break:break-all;font-size:.8rem;background:#f6f8fa;padding:.4rem}'

function webhookRows(state: DashboardState): string {
  if (state.webhooks.length === 0) return '<tr><td colspan="6">No webhook registered.</td></tr>'
  const options = EVENT_TYPES.map((t) => `<option>${t}</option>`).join('')
  return state.webhooks
    .map((w) => {
      const mine = state.deliveries.filter((d) => d.webhookId === w.id)
      const last = mine.at(-1)
      const lastText = last
        ? `<span class="${last.ok ? 'ok' : 'fail'}">${last.status ?? esc(last.error ?? 'no answer')}</span>`
        : '—'
      const disable =
        w.state === 'active'
          ? `<form class="inline" method="post" action="/_control/webhooks/state"><input type="hidden" name="redirect" value="1">` +
            `<input type="hidden" name="id" value="${esc(w.id)}"><input type="hidden" name="state" value="disabled">` +
            '<button class="disable">Disable</button></form>'
          : ''
      return (
        `<tr data-webhook="${esc(w.id)}" data-account="${esc(w.account ?? '')}"><td><code>${esc(w.id)}</code></td>` +
        `<td class="account">${w.account === undefined ? 'app-wide' : `<code>${esc(w.account)}</code>`}</td><td>${esc(w.url)}</td>` +
        `<td class="state ${w.state === 'active' ? 'ok' : 'fail'}">${esc(w.state)} ${disable}</td>` +
        `<td>${mine.length} attempt(s), last: ${lastText}</td><td>` +
        `<form class="inline" method="post" action="/_control/trigger"><input type="hidden" name="redirect" value="1">` +
        `<input type="hidden" name="webhookId" value="${esc(w.id)}">` +
        `<select name="type" class="event-type" aria-label="Event type for ${esc(w.id)}">${options}</select> ` +
        '<button class="send">Send</button></form></td></tr>'
      )
    })
    .join('')
}

function deliveryRows(state: DashboardState): string {
  if (state.deliveries.length === 0) return '<tr><td colspan="7">No delivery yet.</td></tr>'
  return state.deliveries
    .slice(-100)
    .reverse()
    .map((d) => {
      const answer = d.status !== undefined ? String(d.status) : esc(d.error ?? 'no answer')
      const next = d.retryAt ? `retry at ${esc(d.retryAt)}` : d.ok ? 'delivered' : 'gave up'
      const sent = d.request
        ? `<details class="exchange"><summary>request and answer</summary><pre class="request">${esc(
            Object.entries(d.request.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n'),
          )}\n\n${esc(d.request.body)}</pre><pre class="answer">${esc(d.answer ?? '')}</pre></details>`
        : ''
      const again =
        `<form class="inline" method="post" action="/_control/redeliver"><input type="hidden" name="redirect" value="1">` +
        `<input type="hidden" name="deliveryId" value="${esc(d.deliveryId)}"><button class="redeliver">Redeliver</button></form>`
      return (
        `<tr class="delivery" data-payload="${esc(d.payloadId)}" data-delivery="${esc(d.deliveryId)}"><td>${esc(d.at)}</td><td><code>${esc(d.webhookId)}</code></td>` +
        `<td>${esc(d.type)}</td><td><code>${esc(d.payloadId)}</code></td><td>${d.attempt}</td>` +
        `<td class="${d.ok ? 'ok' : 'fail'} status">${answer}</td><td>${next} ${again}${sent}</td></tr>`
      )
    })
    .join('')
}

function accountRows(state: DashboardState): string {
  if (state.accounts.length === 0) return '<tr><td colspan="4">No account connected yet.</td></tr>'
  return state.accounts
    .map((a) => {
      const button = (action: string, label: string, cls: string) =>
        `<form class="inline" method="post" action="${action}"><input type="hidden" name="redirect" value="1">` +
        `<input type="hidden" name="account" value="${esc(a.account)}"><button class="${cls}">${label}</button></form>`
      return (
        `<tr data-account="${esc(a.account)}"><td><code>${esc(a.account)}</code></td>` +
        `<td class="grants">${a.grants - a.revoked} active, ${a.revoked} revoked</td>` +
        `<td class="live">${a.liveAccessTokens}</td><td>` +
        `${button('/_control/tokens/expire', 'Expire access token', 'expire')} ` +
        `${button('/_control/grants/revoke', 'Revoke grant', 'revoke')} ` +
        `<form class="inline" method="post" action="/_control/trigger"><input type="hidden" name="redirect" value="1">` +
        `<input type="hidden" name="account" value="${esc(a.account)}">` +
        `<select name="type" class="event-type" aria-label="Event type for ${esc(a.account)}">${EVENT_TYPES.map((t) => `<option>${t}</option>`).join('')}</select> ` +
        '<button class="send-account">Send to its webhooks</button></form></td></tr>'
      )
    })
    .join('')
}

/**
 * The buttons send JSON (the control API takes no form bodies, so another site's page cannot
 * post to it), then reload the page, which shows the notice the answer left.
 */
const SCRIPT =
  "document.addEventListener('submit',async(e)=>{const f=e.target;e.preventDefault();" +
  'await fetch(f.action,{method:"POST",headers:{"content-type":"application/json"},' +
  'body:JSON.stringify(Object.fromEntries(new FormData(f)))}).catch(()=>{});location.replace("/")})'

/** The fake service's dashboard: webhooks, deliveries with their retries, connected accounts. */
export function dashboardPage(state: DashboardState): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fake scheduling service</title>' +
    `<style>${STYLE}</style></head><body><h1>Fake scheduling service</h1>` +
    (state.notice ? `<p class="notice" id="notice">${esc(state.notice)}</p>` : '') +
    '<h2>Webhooks</h2><table id="webhooks"><tr><th>id</th><th>account</th><th>url</th><th>state</th><th>deliveries</th><th>send an event</th></tr>' +
    `${webhookRows(state)}</table>` +
    '<h2>Connected accounts</h2><table id="accounts"><tr><th>account</th><th>grants</th><th>live access tokens</th><th></th></tr>' +
    `${accountRows(state)}</table>` +
    '<h2>Deliveries</h2><table id="deliveries"><tr><th>at</th><th>webhook</th><th>type</th><th>payload</th><th>attempt</th><th>answer</th><th>next</th></tr>' +
    `${deliveryRows(state)}</table><script>${SCRIPT}</script></body></html>`
  )
}
