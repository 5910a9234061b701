import { ConfigError } from '../errors/errors.js'
import type { DeliveryStatus, LedgerEntry } from '../ledger/entry.js'
import { DELIVERY_STATUSES, type LedgerFilter } from '../ledger/store.js'
import { consoleLogger, describeError, emit } from '../log.js'
import { postAction } from './actions.js'
import { COOKIE, newToken, pageKeys, tokenCookie, tokenHolds } from './guard.js'
import { malformed, renderPage } from './html.js'
import {
  boundedText,
  html,
  json,
  MAX_FORM,
  nodeForm,
  type PageAnswer,
  type PageRequest,
  parsedPath,
  refusal,
  shown,
  wantsJson,
} from './http.js'
import { noticeOf } from './notice.js'
import type {
  Allowed,
  BodyOf,
  DeliveryPage,
  LedgerPageOptions,
  PageLedger,
  PageNodeRequest,
  PageNodeResponse,
} from './options.js'

// The delivery page: a list of the ledger's entries with their status, attempts and last
// error, filtered by status, account and type, with a replay button per entry. It refuses to
// exist without an authorization function, reads nothing of a request's body before it
// allowed the request (and then 4 KiB at most), escapes every value whatever its type, and
// takes a replay or a purge only as a POST from its own page carrying a token it signed itself
// (actions.ts).

/** The page's routes: what each request is answered. */
class DeliveryPageRoutes implements DeliveryPage {
  readonly #pageSize: number
  readonly keys: readonly string[]

  constructor(
    readonly ledger: PageLedger,
    readonly options: LedgerPageOptions,
  ) {
    if (typeof options?.authorize !== 'function')
      throw new ConfigError(
        'createDeliveryPage(): authorize is required, a function telling whether a request may see the deliveries (they hold account keys and errors).',
      )
    this.#pageSize = options.pageSize ?? 50
    this.keys = pageKeys(options.secret)
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
    if (request.method === 'POST') return postAction(this, at, bodyOf)
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const refused = refusal(405, 'GET or POST only.')
      return { ...refused, headers: { ...refused.headers, allow: 'GET, POST' } }
    }
    // The token the page's forms carry: the one this page signed for this session when the
    // browser holds it, a new one otherwise. A cookie the page did not sign is never adopted.
    const held = tokenCookie(request.headers)
    const token = (await tokenHolds(this.keys, session, held))
      ? held!
      : await newToken(this.keys, session)
    const cookie: Record<string, string> =
      token === held
        ? {}
        : { 'set-cookie': `${COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/` }
    const id = url.searchParams.get('id')
    return id === null ? this.#list(at, token, cookie) : this.#one(id, at, token, cookie)
  }

  /** One delivery: the page of one row, or its JSON. */
  async #one(id: string, at: Allowed, token: string, cookie: Record<string, string>) {
    const entry = await this.ledger.get(id)
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
    const recent = after ? [] : this.ledger.recent()
    const dropped = this.ledger.recentDropped()
    if (at.asJson) {
      const more = page.next === undefined ? {} : { next: page.next }
      const gone = after ? {} : { recentDropped: dropped }
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
      canPurge: true,
      recent,
      dropped,
      ...(next === undefined ? {} : { next: next.toString() }),
      ...(notice === undefined ? {} : { notice }),
    }
    return html(200, renderPage(view), cookie)
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

/** An entry as the page's JSON shows it; a malformed one with what is wrong. */
function asJson(entry: LedgerEntry) {
  const wrong = malformed(entry)
  if (wrong === undefined) return shown(entry)
  return typeof entry === 'object' && entry !== null
    ? { ...shown(entry), malformed: wrong }
    : { malformed: wrong }
}

/**
 * The delivery page of a ledger: its entries with their status, attempts and last error,
 * filtered by status, account and type, a replay button each (with `replay`, the webhook
 * handler's or middleware's) and a purge (the ledger's, as the CLI's `deliveries purge` sends
 * it). Refuses to be made without `authorize`.
 *
 * @example
 * ```ts
 * const page = createDeliveryPage(ledger, { authorize: (req) => isAdmin(req), replay: webhooks.replay })
 * app.use('/admin/deliveries', page.node)
 * ```
 */
export function createDeliveryPage(ledger: PageLedger, options: LedgerPageOptions): DeliveryPage {
  return new DeliveryPageRoutes(ledger, options)
}
