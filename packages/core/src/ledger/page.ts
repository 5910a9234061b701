import { ConfigError } from '../errors/errors.js'
import { consoleLogger, describeError, emit, type Logger } from '../log.js'
import type { DeliveryStatus, LedgerEntry } from './entry.js'
import { COOKIE, fromThisPage, newToken, pageKeys, tokenCookie, tokenHolds } from './page-guard.js'
import { malformed, type PageNotice, renderPage } from './page-html.js'
import {
  boundedText,
  header,
  html,
  json,
  MAX_FORM,
  type PageAnswer,
  type PageRequest,
  refusal,
  SECURITY_HEADERS,
  sameText,
  shown,
  wantsJson,
} from './page-http.js'
import type { RecentAnswer, RecentDropped } from './recent.js'
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
// exist without an authorization function, reads nothing of a request's body before it
// allowed the request (and then 4 KiB at most), escapes every value whatever its type, and
// takes a replay only as a POST from its own page carrying a token it signed itself.

export interface LedgerPageOptions {
  /**
   * Required: whether this request may see the page (and replay). The page holds account
   * keys, event types and error messages: check the app's own session or credentials here.
   * Answer `true`, or a string naming the session (its id, the signed-in user): the page's
   * anti-forgery token is then bound to it, so a token made for one session is refused in
   * another. Anything else (`false`, `undefined`, an empty string) refuses: the page fails
   * closed.
   */
  authorize: (request: PageRequest) => boolean | string | Promise<boolean | string>
  /**
   * The key the page signs its anti-forgery tokens with, 32 characters or more (or a list,
   * newest first, to rotate it). Default: a key of this process, so give one when several
   * instances serve the page (a token made by one is refused by another without it).
   */
  secret?: string | readonly string[]
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
  /** How many of those it no longer holds. */
  dropped?(): RecentDropped
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

/** A request the page allowed, with the session `authorize` named (`''` for none). */
interface Allowed {
  request: PageRequest
  session: string
  url: URL
  asJson: boolean
}

/** A request's body, read only once allowed: `undefined` when it is over `MAX_FORM`. */
type BodyOf = () => Promise<string | undefined>

/** The page's routes: what each request is answered. */
class DeliveryPageRoutes implements DeliveryPage {
  readonly #pageSize: number
  readonly #keys: readonly string[]

  constructor(
    readonly ledger: PageLedger,
    readonly options: LedgerPageOptions,
  ) {
    if (typeof options?.authorize !== 'function')
      throw new ConfigError(
        'ledger.page(): authorize is required, a function telling whether a request may see the deliveries (they hold account keys and errors).',
      )
    this.#pageSize = options.pageSize ?? 50
    this.#keys = pageKeys(options.secret)
  }

  answer = (request: PageRequest & { body?: string }): Promise<PageAnswer> => {
    const { body } = request
    return this.#answer(request, async () =>
      body === undefined || body.length <= MAX_FORM ? (body ?? '') : undefined,
    )
  }

  async #answer(request: PageRequest, bodyOf: BodyOf): Promise<PageAnswer> {
    // Where the page is mounted is the app's routing: only the query counts here. The path is
    // never routed on; leading slashes (`//`, `/\\`) are folded so it always parses.
    const url = parsedPath(request.url)
    if (url === undefined) return refusal(400, 'Not a request path.')
    const allowed = await this.options.authorize(request)
    // Only `true` or a session's name lets a request in: a truthy accident (1, an object) does not.
    const session =
      allowed === true ? '' : typeof allowed === 'string' && allowed !== '' ? allowed : undefined
    if (session === undefined) return refusal(403, 'Not allowed.')
    const at: Allowed = { request, session, url, asJson: wantsJson(request.headers) }
    if (request.method === 'POST') return this.#post(at, bodyOf)
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refused = refusal(405, 'GET or POST only.')
      return { ...refused, headers: { ...refused.headers, allow: 'GET, POST' } }
    }
    // The token the page's forms carry: the one this page signed for this session when the
    // browser holds it, a new one otherwise. A cookie the page did not sign is never adopted.
    const held = tokenCookie(request.headers)
    const token = (await tokenHolds(this.#keys, session, held))
      ? held!
      : await newToken(this.#keys, session)
    const cookie: Record<string, string> =
      token === held
        ? {}
        : { 'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
    const id = url.searchParams.get('id')
    return id === null ? this.#list(at, token, cookie) : this.#one(id, at, token, cookie)
  }

  /** One delivery: the page of one row, or its JSON. */
  async #one(id: string, at: Allowed, token: string, cookie: Record<string, string>) {
    const entry = await this.ledger.get?.(id)
    if (entry === undefined)
      return at.asJson ? json(404, { error: 'not_found' }) : refusal(404, 'No such delivery.')
    if (at.asJson) return json(200, { entry: asJson(entry) }, cookie)
    const view = {
      entries: [entry],
      filter: {},
      csrf: token,
      canReplay: this.options.replay !== undefined,
    }
    return html(200, renderPage(view), cookie)
  }

  /** A page of deliveries, filtered, newest first. */
  async #list(at: Allowed, token: string, cookie: Record<string, string>) {
    const q = at.url.searchParams
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
    const dropped = this.ledger.dropped?.()
    if (at.asJson) {
      const more = page.next === undefined ? {} : { next: page.next }
      const gone = dropped === undefined || after ? {} : { recentDropped: dropped }
      return json(200, { entries: page.entries.map(asJson), recent, ...gone, ...more }, cookie)
    }
    const next =
      page.next === undefined ? undefined : new URLSearchParams({ ...filter, after: page.next })
    const notice = noticeOf(q)
    const view = {
      entries: page.entries,
      filter,
      csrf: token,
      canReplay: this.options.replay !== undefined,
      canPurge: this.options.purge !== undefined,
      recent,
      ...(dropped === undefined ? {} : { dropped }),
      ...(next === undefined ? {} : { next: next.toString() }),
      ...(notice === undefined ? {} : { notice }),
    }
    return html(200, renderPage(view), cookie)
  }

  /** A replay or a purge: only from this page (its own origin, its own signed token). */
  async #post(at: Allowed, bodyOf: BodyOf): Promise<PageAnswer> {
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
      !(await tokenHolds(this.#keys, at.session, cookie))
    )
      return refusal(403, 'The page expired: load it again, then replay.')
    if (form.has('purge')) return this.#purge(form, at)
    return this.#replay(form, at)
  }

  /** A purge: what retention says is over, or (with `account`) every body of one account. */
  async #purge(form: URLSearchParams, at: Allowed): Promise<PageAnswer> {
    const { purge } = this.options
    if (purge === undefined) return refusal(400, 'This page takes no purge.')
    const account = form.get('account') || undefined
    const purged = await purge(account === undefined ? {} : { account })
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
  async #replay(form: URLSearchParams, at: Allowed): Promise<PageAnswer> {
    const id = form.get('replay')
    const { replay } = this.options
    if (replay === undefined || id === null || id === '') return refusal(400, 'Nothing to replay.')
    const report = await replay(id, { reason: 'replayed from the delivery page' })
    if (at.asJson) return json(200, report)
    const code =
      report.replayed === 1 ? 'replayed' : report.queued === 1 ? 'queued' : 'not-replayed'
    const query = new URLSearchParams(at.url.searchParams)
    for (const name of NOTICE_FIELDS) query.delete(name)
    query.set('notice', code)
    return back(query)
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
    const request = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers }
    const out = await this.#answer(request, () => nodeForm(req)).catch((error: unknown) =>
      this.#failed(error),
    )
    res.writeHead(out.status, out.headers).end(out.body)
  }

  fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    const headers: Record<string, string> = {}
    request.headers.forEach((value, key) => {
      headers[key] = value
    })
    const out = await this.#answer(
      { method: request.method, url: url.pathname + url.search, headers },
      () => boundedText(request, MAX_FORM),
    ).catch((error: unknown) => this.#failed(error))
    const text = out.status === 303 ? null : out.body
    return new Response(text, { status: out.status, headers: out.headers })
  }
}

/** A Node request's form, read up to `MAX_FORM` bytes: `undefined` past it (the rest unread). */
async function nodeForm(req: PageNodeRequest): Promise<string | undefined> {
  const announced = Number(header(req.headers, 'content-length') ?? 0)
  if (!(announced <= MAX_FORM)) return undefined
  const decoder = new TextDecoder()
  let body = ''
  let size = 0
  for await (const chunk of req) {
    const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk
    size += bytes.byteLength
    if (size > MAX_FORM) return undefined
    body += decoder.decode(bytes, { stream: true })
  }
  return body + decoder.decode()
}

/** A request's path and query under a base of its own; leading slashes folded into one. */
function parsedPath(path: string): URL | undefined {
  try {
    return new URL(`http://page.invalid/${path.replace(/^[/\\]+/, '')}`)
  } catch {
    return undefined
  }
}

/** The query fields a notice takes: dropped from the page's own query before it is set again. */
const NOTICE_FIELDS = ['notice', 'bodies', 'entries', 'marks', 'of'] as const

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

/** An entry as the page's JSON shows it; a malformed one with what is wrong. */
function asJson(entry: LedgerEntry) {
  const wrong = malformed(entry)
  if (wrong === undefined) return shown(entry)
  return typeof entry === 'object' && entry !== null
    ? { ...shown(entry), malformed: wrong }
    : { malformed: wrong }
}

/** Back to the page after an action, with a notice saying what it did. */
function back(query: URLSearchParams): PageAnswer {
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
