import { getHeader, type HeadersInput } from '../http/headers.js'
import { escapeHtml } from '../http/html.js'

/** True when the client asked for JSON rather than a page. */
export function wantsJson(headers: HeadersInput): boolean {
  const accept = getHeader(headers, 'accept') ?? ''
  return accept.includes('application/json') && !accept.includes('text/html')
}

/** A small, self-contained error page. */
export function errorPage(
  title: string,
  message: string,
  retryHref?: string,
  cause?: string,
): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">` +
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>` +
    (cause
      ? `<p id="cause" style="background:#fff4e5;padding:.75rem;border-radius:.375rem"><strong>For the developer:</strong> ${escapeHtml(cause)} <small>(shown outside production only)</small></p>`
      : '') +
    (retryHref ? `<p><a href="${escapeHtml(retryHref)}">Try again</a></p>` : '') +
    '</body></html>'
  )
}

/** A small page that tells something and links on. */
export function noticePage(title: string, message: string, continueHref: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width">' +
    `<title>${escapeHtml(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">` +
    `<h1>${escapeHtml(title)}</h1><p id="notice">${escapeHtml(message)}</p>` +
    `<p><a id="continue" href="${escapeHtml(continueHref)}">Continue</a></p></body></html>`
  )
}
