import { ConfigError } from '../errors/errors.js'
import type { DeliveryStatus, LedgerEntry } from './entry.js'
import { renderPage } from './page-html.js'
import {
  COOKIE,
  cookieOf,
  header,
  html,
  json,
  MAX_FORM,
  newToken,
  type PageAnswer,
  type PageRequest,
  refusal,
  SECURITY_HEADERS,
  sameText,
  shown,
  wantsJson,
} from './page-http.js'

export type { PageAnswer, PageRequest } from './page-http.js'

import type { ReplayReport } from './replay.js'
import type { LedgerPage as EntriesPage, LedgerFilter } from './store.js'

// The delivery page: a list of the ledger's entries with their status, attempts and last
// error, filtered by status, account and type, with a replay button per entry. It refuses to
// exist without an authorization function, answers nothing it did not check, escapes every
// value, and takes a replay only as a same-site POST carrying the token its own page set.

export interface LedgerPageOptions {
  /**
   * Required: whether this request may see the page (and replay). The page holds account
   * keys, event types and error messages: check the app's own session or credentials here.
   */
  authorize: (request: PageRequest) => boolean | Promise<boolean>
  /**
   * Runs a delivery again: the webhook handler's (or middleware's) `replay`. Without it, the
   * page has no replay buttons.
   */
  replay?: (id: string, options: { reason: string }) => Promise<ReplayReport>
  /** Entries per page. Default 50. */
  pageSize?: number
}

/** What the page reads of the ledger. */
interface PageLedger {
  list(filter: LedgerFilter): Promise<EntriesPage>
  get?(id: string): Promise<LedgerEntry | undefined>
}

/** The page, mountable on any framework: `node(req, res)` or `fetch(request)`. */
export interface DeliveryPage {
  /** Answers one request (path relative to the mount); reads a POST's body from `body`. */
  answer(request: PageRequest & { body?: string }): Promise<PageAnswer>
  /** Node's `(req, res)`: Express `app.use(path, page.node)`, Koa `ctx.req/ctx.res`, Fastify `reply.raw`. */
  node(req: PageNodeRequest, res: PageNodeResponse): void
  /** A Fetch `Request` (h3, Hono, Bun, Deno): the path after the mount is the URL's own. */
  fetch(request: Request): Promise<Response>
}

/** What the page reads of a Node request (`IncomingMessage`). */
export interface PageNodeRequest extends AsyncIterable<Uint8Array | string> {
  method?: string
  url?: string
  headers: Record<string, string | string[] | undefined>
}

/** What the page writes to a Node response (`ServerResponse`). */
export interface PageNodeResponse {
  writeHead(status: number, headers: Record<string, string>): { end(body: string): void }
}

const STATUSES = new Set<DeliveryStatus>([
  'received',
  'processing',
  'done',
  'failed',
  'dead',
  'stale',
])

/**
 * The delivery page of a ledger. Refuses to be made without `authorize`.
 *
 * @example
 * ```ts
 * const page = ledger.page({ authorize: (req) => isAdmin(req), replay: webhooks.replay })
 * app.use('/admin/deliveries', page.node)
 * ```
 */
export function createDeliveryPage(ledger: PageLedger, options: LedgerPageOptions): DeliveryPage {
  if (typeof options?.authorize !== 'function')
    throw new ConfigError(
      'ledger.page(): authorize is required, a function telling whether a request may see the deliveries (they hold account keys and errors).',
    )
  const pageSize = options.pageSize ?? 50
  const answer = async (request: PageRequest & { body?: string }): Promise<PageAnswer> => {
    // Where the page is mounted is the app's routing: only the query counts here.
    const url = new URL(request.url, 'http://page.invalid')
    if (!(await options.authorize(request))) return refusal(403, 'Not allowed.')
    if (request.method === 'POST') return post(request, url)
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return {
        ...refusal(405, 'GET or POST only.'),
        headers: { ...html(405, '').headers, allow: 'GET, POST' },
      }
    const token = cookieOf(request.headers) ?? newToken()
    const q = url.searchParams
    const cookie = { 'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
    const asJson = wantsJson(request.headers)
    const id = q.get('id')
    if (id !== null) {
      const entry = await ledger.get?.(id)
      if (asJson)
        return entry === undefined
          ? json(404, { error: 'not_found' })
          : json(200, { entry: shown(entry) }, cookie)
      return entry === undefined
        ? refusal(404, 'No such delivery.')
        : html(
            200,
            renderPage({
              entries: [entry],
              filter: {},
              csrf: token,
              canReplay: options.replay !== undefined,
            }),
            cookie,
          )
    }
    const status = q.get('status') ?? ''
    const filter = {
      ...(STATUSES.has(status as DeliveryStatus) ? { status } : {}),
      ...(q.get('account') ? { account: q.get('account')! } : {}),
      ...(q.get('type') ? { type: q.get('type')! } : {}),
    }
    const page = await ledger.list({
      ...(filter as LedgerFilter),
      limit: pageSize,
      ...(q.get('after') ? { after: q.get('after')! } : {}),
    })
    let next: string | undefined
    if (page.next !== undefined) {
      const nextQuery = new URLSearchParams(filter)
      nextQuery.set('after', page.next)
      next = nextQuery.toString()
    }
    if (asJson)
      return json(
        200,
        {
          entries: page.entries.map(shown),
          ...(page.next === undefined ? {} : { next: page.next }),
        },
        cookie,
      )
    const notice = q.get('replayed') ?? undefined
    return html(
      200,
      renderPage({
        entries: page.entries,
        filter,
        csrf: token,
        canReplay: options.replay !== undefined,
        ...(next === undefined ? {} : { next }),
        ...(notice === undefined ? {} : { notice }),
      }),
      cookie,
    )
  }

  const post = async (request: PageRequest & { body?: string }, url: URL): Promise<PageAnswer> => {
    // A replay only from this page: same site, the form's token the page's own cookie.
    const site = header(request.headers, 'sec-fetch-site')
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return refusal(403, 'A replay is taken from this page only.')
    const type = (header(request.headers, 'content-type') ?? '').split(';', 1)[0]!.trim()
    if (type !== 'application/x-www-form-urlencoded') return refusal(415, 'A form post only.')
    const form = new URLSearchParams((request.body ?? '').slice(0, MAX_FORM))
    const cookie = cookieOf(request.headers)
    const sent = form.get('csrf') ?? ''
    if (cookie === undefined || !sameText(cookie, sent))
      return refusal(403, 'The page expired: load it again, then replay.')
    const id = form.get('replay')
    if (options.replay === undefined || id === null || id === '')
      return refusal(400, 'Nothing to replay.')
    const report = await options.replay(id, { reason: 'replayed from the delivery page' })
    if (wantsJson(request.headers)) return json(200, report)
    const said =
      report.replayed === 1
        ? `Replayed ${id}.`
        : `${id} was not replayed: ${report.problems[0]?.why ?? (report.failed === 1 ? 'its handlers failed again' : 'unknown')}.`
    const back = new URLSearchParams(url.searchParams)
    back.set('replayed', said)
    return {
      status: 303,
      headers: { location: `?${back.toString()}`, ...SECURITY_HEADERS },
      body: '',
    }
  }

  return {
    answer,
    node: (req, res) => {
      void (async () => {
        let body = ''
        if (req.method === 'POST') {
          for await (const chunk of req) {
            body += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)
            if (body.length > MAX_FORM) break
          }
        }
        const out = await answer({
          method: req.method ?? 'GET',
          url: req.url ?? '/',
          headers: req.headers,
          body,
        }).catch(() => refusal(500, 'The deliveries could not be read.'))
        res.writeHead(out.status, out.headers).end(out.body)
      })()
    },
    fetch: async (request) => {
      const url = new URL(request.url)
      const headers: Record<string, string> = {}
      request.headers.forEach((value, key) => {
        headers[key] = value
      })
      const body =
        request.method === 'POST' ? (await request.text()).slice(0, MAX_FORM + 1) : undefined
      const out = await answer({
        method: request.method,
        url: url.pathname + url.search,
        headers,
        ...(body === undefined ? {} : { body }),
      }).catch(() => refusal(500, 'The deliveries could not be read.'))
      return new Response(out.status === 303 ? null : out.body, {
        status: out.status,
        headers: out.headers,
      })
    },
  }
}
