import { ConfigError } from '../errors/errors.js'
import { consoleLogger, describeError, emit, type Logger } from '../log.js'
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

import type { RecentAnswer } from './recent.js'
import type { ReplayReport } from './replay.js'
import {
  DELIVERY_STATUSES,
  type LedgerPage as EntriesPage,
  type LedgerFilter,
  type LedgerPurged,
} from './store.js'

export type { PageAnswer, PageRequest } from './page-http.js'

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
  /**
   * Drops what retention says is over, or every body of one account: `ledger.purge`. Given by
   * `ledger.page()`; without it, the page takes no purge.
   */
  purge?: (options: { account?: string }) => Promise<LedgerPurged>
  /** Entries per page. Default 50. */
  pageSize?: number
  /** Where a failure to answer (the store failing) is logged. Default the console. */
  logger?: Logger
}

/** What the page reads of the ledger. */
interface PageLedger {
  list(filter: LedgerFilter): Promise<EntriesPage>
  get?(id: string): Promise<LedgerEntry | undefined>
  /** Requests this process answered without a run (refused, duplicate). */
  recent?(): readonly RecentAnswer[]
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

/** The page's routes: what each request is answered. */
class DeliveryPageRoutes implements DeliveryPage {
  readonly #pageSize: number

  constructor(
    readonly ledger: PageLedger,
    readonly options: LedgerPageOptions,
  ) {
    if (typeof options?.authorize !== 'function')
      throw new ConfigError(
        'ledger.page(): authorize is required, a function telling whether a request may see the deliveries (they hold account keys and errors).',
      )
    this.#pageSize = options.pageSize ?? 50
  }

  answer = async (request: PageRequest & { body?: string }): Promise<PageAnswer> => {
    // Where the page is mounted is the app's routing: only the query counts here.
    const url = new URL(request.url, 'http://page.invalid')
    if (!(await this.options.authorize(request))) return refusal(403, 'Not allowed.')
    if (request.method === 'POST') return this.#post(request, url)
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refused = refusal(405, 'GET or POST only.')
      return { ...refused, headers: { ...refused.headers, allow: 'GET, POST' } }
    }
    const token = cookieOf(request.headers) ?? newToken()
    const cookie = { 'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
    const id = url.searchParams.get('id')
    const asJson = wantsJson(request.headers)
    return id === null
      ? this.#list(url.searchParams, token, cookie, asJson)
      : this.#one(id, token, cookie, asJson)
  }

  /** One delivery: the page of one row, or its JSON. */
  async #one(id: string, token: string, cookie: Record<string, string>, asJson: boolean) {
    const entry = await this.ledger.get?.(id)
    if (entry === undefined)
      return asJson ? json(404, { error: 'not_found' }) : refusal(404, 'No such delivery.')
    if (asJson) return json(200, { entry: shown(entry) }, cookie)
    const view = {
      entries: [entry],
      filter: {},
      csrf: token,
      canReplay: this.options.replay !== undefined,
    }
    return html(200, renderPage(view), cookie)
  }

  /** A page of deliveries, filtered, newest first. */
  async #list(q: URLSearchParams, token: string, cookie: Record<string, string>, asJson: boolean) {
    const status = q.get('status') ?? ''
    const filter = {
      ...(DELIVERY_STATUSES.has(status as DeliveryStatus) ? { status } : {}),
      ...(q.get('account') ? { account: q.get('account')! } : {}),
      ...(q.get('type') ? { type: q.get('type')! } : {}),
    }
    const after = q.get('after')
    const page = await this.ledger.list({
      ...(filter as LedgerFilter),
      limit: this.#pageSize,
      ...(after ? { after } : {}),
    })
    const recent = after ? [] : (this.ledger.recent?.() ?? [])
    if (asJson) {
      const more = page.next === undefined ? {} : { next: page.next }
      return json(200, { entries: page.entries.map(shown), recent, ...more }, cookie)
    }
    const next =
      page.next === undefined ? undefined : new URLSearchParams({ ...filter, after: page.next })
    const notice = q.get('notice')
    const view = {
      entries: page.entries,
      filter,
      csrf: token,
      canReplay: this.options.replay !== undefined,
      canPurge: this.options.purge !== undefined,
      recent,
      ...(next === undefined ? {} : { next: next.toString() }),
      ...(notice === null ? {} : { notice }),
    }
    return html(200, renderPage(view), cookie)
  }

  /** A replay or a purge: only from this page (same site, its own token). */
  async #post(request: PageRequest & { body?: string }, url: URL): Promise<PageAnswer> {
    const site = header(request.headers, 'sec-fetch-site')
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return refusal(403, 'A replay is taken from this page only.')
    const type = (header(request.headers, 'content-type') ?? '').split(';', 1)[0]!.trim()
    if (type !== 'application/x-www-form-urlencoded') return refusal(415, 'A form post only.')
    const form = new URLSearchParams((request.body ?? '').slice(0, MAX_FORM))
    const cookie = cookieOf(request.headers)
    if (cookie === undefined || !sameText(cookie, form.get('csrf') ?? ''))
      return refusal(403, 'The page expired: load it again, then replay.')
    if (form.has('purge')) return this.#purge(form, request)
    return this.#replay(form, request, url)
  }

  /** A purge: what retention says is over, or (with `account`) every body of one account. */
  async #purge(form: URLSearchParams, request: PageRequest): Promise<PageAnswer> {
    const { purge } = this.options
    if (purge === undefined) return refusal(400, 'This page takes no purge.')
    const account = form.get('account') || undefined
    const purged = await purge(account === undefined ? {} : { account })
    if (wantsJson(request.headers)) return json(200, purged)
    const marks = purged.marks === undefined ? '' : `, ${purged.marks} marks`
    const notice = `Purged ${purged.bodies} bodies${marks} and ${purged.entries} entries${account === undefined ? '' : ` of ${account}`}.`
    return back(new URLSearchParams(), notice)
  }

  /** A replay, then back to the page with what came of it. */
  async #replay(form: URLSearchParams, request: PageRequest, url: URL): Promise<PageAnswer> {
    const id = form.get('replay')
    const { replay } = this.options
    if (replay === undefined || id === null || id === '') return refusal(400, 'Nothing to replay.')
    const report = await replay(id, { reason: 'replayed from the delivery page' })
    if (wantsJson(request.headers)) return json(200, report)
    const why =
      report.problems[0]?.why ?? (report.failed === 1 ? 'its handlers failed again' : 'unknown')
    const notice =
      report.replayed === 1
        ? `Replayed ${id}.`
        : report.queued === 1
          ? `Queued ${id}: the worker replays it and records how it ends.`
          : `${id} was not replayed: ${why}.`
    return back(new URLSearchParams(url.searchParams), notice)
  }

  /** A failure to answer: logged with its cause, answered 500 without it. */
  #failed(error: unknown): PageAnswer {
    emit(
      this.options.logger ?? consoleLogger,
      'error',
      `Delivery page: the request could not be answered. ${describeError(error)}`,
    )
    return refusal(500, 'The deliveries could not be read.')
  }

  node = (req: PageNodeRequest, res: PageNodeResponse): void => {
    void this.#node(req, res)
  }

  async #node(req: PageNodeRequest, res: PageNodeResponse): Promise<void> {
    let body = ''
    if (req.method === 'POST') {
      for await (const chunk of req) {
        body += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)
        if (body.length > MAX_FORM) break
      }
    }
    const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body }
    const out = await this.answer(request).catch((error: unknown) => this.#failed(error))
    res.writeHead(out.status, out.headers).end(out.body)
  }

  fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    request.headers.forEach((value, key) => {
      headers[key] = value
    })
    const body = request.method === 'POST' ? (await request.text()).slice(0, MAX_FORM + 1) : ''
    const out = await this.answer({
      method: request.method,
      url: url.pathname + url.search,
      headers,
      body,
    }).catch((error: unknown) => this.#failed(error))
    const text = out.status === 303 ? null : out.body
    return new Response(text, { status: out.status, headers: out.headers })
  }
}

/** Back to the page after an action, with a line saying what it did. */
function back(query: URLSearchParams, notice: string): PageAnswer {
  query.set('notice', notice)
  return {
    status: 303,
    headers: { location: `?${query.toString()}`, ...SECURITY_HEADERS },
    body: '',
  }
}

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
  return new DeliveryPageRoutes(ledger, options)
}
