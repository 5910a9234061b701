import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type {
  ApiCounters,
  ApiFailure,
  FakeWebhook,
  WebhookApi,
} from '@scheduling-kit/fake-auth/types'
import { json, readText } from './http.js'

const MAX_PAGE = 100
const WEBHOOK_VERSION = '2020-11-18'

const newId = () => `wh_${randomBytes(8).toString('hex')}`
// Cursors name a position in creation order, so a page is right even when the webhook a
// cursor came from was deleted since.
const cursorOf = (seq: number) => Buffer.from(`c:${seq}`).toString('base64url')
const seqOfCursor = (cursor: string) => {
  const text = Buffer.from(cursor, 'base64url').toString()
  return /^c:\d+$/.test(text) ? Number(text.slice(2)) : undefined
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  try {
    return JSON.parse(await readText(req))
  } catch {
    return undefined
  }
}

/**
 * The service's webhook management API (`/v1/webhooks`), per account as its facts page
 * describes: cursor pages, 201 with the secret on create, 422 for a bad URL, 404 for another
 * account's webhook, delete answering `state: "deleted"`. Lists and reads leave the secret
 * out (the reference does not promise it). Failures and latency can be switched on.
 */
export class WebhookRegistry implements WebhookApi {
  readonly #byId = new Map<string, FakeWebhook>()
  /**
   * Each account's webhooks in creation order (`undefined`: the app-wide ones): a list reads
   * one account's, so a request costs the same at a hundred accounts or a million.
   */
  readonly #byAccount = new Map<string | undefined, FakeWebhook[]>()
  readonly #seq = new Map<string, number>()
  #nextSeq = 1
  readonly #failures: ApiFailure[] = []
  readonly #accountOf: (authorization: string | undefined) => string | undefined
  /** Successful `GET /v1/webhooks` answered, by the account that asked. */
  readonly listsByAccount = new Map<string | undefined, number>()
  readonly counters: ApiCounters = {
    requests: 0,
    byStatus: {},
    created: 0,
    deleted: 0,
    listed: 0,
    examined: 0,
  }

  constructor(accountOf: (authorization: string | undefined) => string | undefined) {
    this.#accountOf = accountOf
  }

  /** Makes a webhook (the API's create, or the control API's with an id or secret of its own). */
  create(input: {
    url: string
    account?: string
    secret?: string
    id?: string
    events?: string[]
  }): FakeWebhook {
    const webhook: FakeWebhook = {
      id: input.id ?? newId(),
      url: input.url,
      secret: input.secret ?? randomBytes(24).toString('base64url'),
      state: 'active',
      account: input.account,
      events: input.events ?? [],
      version: WEBHOOK_VERSION,
      created_at: new Date().toISOString(),
      failures: 0,
    }
    // An id given again (the control API's) replaces the webhook it named.
    if (this.#byId.has(webhook.id)) {
      this.#unindex(webhook.id)
      this.#byId.delete(webhook.id)
    }
    this.#byId.set(webhook.id, webhook)
    this.#seq.set(webhook.id, this.#nextSeq++)
    const mine = this.#byAccount.get(webhook.account)
    if (mine === undefined) this.#byAccount.set(webhook.account, [webhook])
    else mine.push(webhook)
    this.counters.created++
    return webhook
  }

  get(id: string): FakeWebhook | undefined {
    return this.#byId.get(id)
  }

  /** Every webhook, oldest first; of one account when given (`null`: the app-wide ones). */
  all(account?: string | null): FakeWebhook[] {
    if (account === undefined) return [...this.#byId.values()]
    return [...(this.#byAccount.get(account ?? undefined) ?? [])]
  }

  #unindex(id: string): void {
    const webhook = this.#byId.get(id)!
    const mine = this.#byAccount.get(webhook.account)!
    mine.splice(mine.indexOf(webhook), 1)
    if (mine.length === 0) this.#byAccount.delete(webhook.account)
  }

  /** Removes a webhook as the API's delete does. */
  remove(id: string): FakeWebhook | undefined {
    const webhook = this.#byId.get(id)
    if (webhook === undefined) return undefined
    this.#unindex(id)
    this.#byId.delete(id)
    this.#seq.delete(id)
    this.counters.deleted++
    return { ...webhook, state: 'deleted' }
  }

  /** Sets a webhook's state, as the service does on its own (`disabled` after failures, say). */
  setState(id: string, state: FakeWebhook['state']): boolean {
    const webhook = this.#byId.get(id)
    if (webhook === undefined) return false
    webhook.state = state
    return true
  }

  /**
   * The next API requests (of `method`, when given) fail this way. `count: 0` clears the
   * failures still queued (of `method`, when given) instead: a storm ends at once.
   */
  failApi(failure: ApiFailure): void {
    if (failure.count === 0) {
      for (let i = this.#failures.length - 1; i >= 0; i--) {
        const queued = this.#failures[i]!
        if (failure.method === undefined || queued.method === failure.method)
          this.#failures.splice(i, 1)
      }
      return
    }
    for (let i = 0; i < (failure.count ?? 1); i++) this.#failures.push({ ...failure, count: 1 })
  }

  /** How many injected failures are still queued. */
  get pendingFailures(): number {
    return this.#failures.length
  }

  #nextFailure(method: string): ApiFailure | undefined {
    const index = this.#failures.findIndex((f) => f.method === undefined || f.method === method)
    return index < 0 ? undefined : this.#failures.splice(index, 1)[0]
  }

  #answer(res: ServerResponse, status: number, body: unknown, headers = {}) {
    this.counters.byStatus[status] = (this.counters.byStatus[status] ?? 0) + 1
    json(res, status, body, headers)
  }

  /** Answers `/v1/webhooks` and `/v1/webhooks/{id}`; `false` for any other path. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const url = new URL(req.url ?? '/', 'http://x')
    const match = /^\/v1\/webhooks(?:\/([^/]+))?\/?$/.exec(url.pathname)
    if (match === null) return false
    this.counters.requests++
    const method = req.method ?? 'GET'
    const account = this.#accountOf(req.headers.authorization)
    if (account === undefined) {
      this.#answer(
        res,
        401,
        { error: 'invalid_token' },
        {
          'www-authenticate': 'Bearer error="invalid_token"',
        },
      )
      return true
    }
    // The body is read first: a client that gives up during a delay below has sent it whole.
    const input = method === 'POST' ? await readJson(req) : undefined
    const failure = this.#nextFailure(method)
    if (failure?.delayMs) await new Promise((r) => setTimeout(r, failure.delayMs))
    if (failure !== undefined && !failure.landed) {
      this.#fail(res, failure)
      return true
    }
    const id = match[1] === undefined ? undefined : decodeURIComponent(match[1])
    const mine = id === undefined ? undefined : this.#byId.get(id)
    const own = mine !== undefined && mine.account === account ? mine : undefined
    let status: number
    let body: unknown
    if (id === undefined && method === 'GET') {
      const page = this.#page(account, url.searchParams)
      ;[status, body] =
        page === undefined
          ? [
              400,
              { error: 'invalid_cursor', message: 'after or before is not a cursor this API gave' },
            ]
          : [200, page]
      if (page !== undefined) {
        this.counters.listed++
        this.listsByAccount.set(account, (this.listsByAccount.get(account) ?? 0) + 1)
      }
    } else if (id === undefined && method === 'POST') {
      const target = (input as { url?: unknown } | undefined)?.url
      if (
        typeof target !== 'string' ||
        !URL.canParse(target) ||
        !/^https?:$/.test(new URL(target).protocol)
      ) {
        ;[status, body] = [422, { errors: { url: [{ message: 'must be a valid URL' }] } }]
      } else {
        ;[status, body] = [201, this.#show(this.create({ url: target, account }), true)]
      }
    } else if (id !== undefined && method === 'GET') {
      ;[status, body] = own ? [200, this.#show(own, false)] : [404, { error: 'not_found' }]
    } else if (id !== undefined && method === 'DELETE') {
      ;[status, body] = own
        ? [200, this.#show(this.remove(own.id)!, false)]
        : [404, { error: 'not_found' }]
    } else {
      ;[status, body] = [405, { error: 'method_not_allowed' }]
    }
    // A client that gave up has closed the connection: the work above is done all the same.
    if (res.destroyed || res.writableEnded) return true
    if (failure !== undefined && failure.status >= 400) this.#fail(res, failure)
    else this.#answer(res, status, body)
    return true
  }

  #fail(res: ServerResponse, failure: ApiFailure) {
    this.#answer(
      res,
      failure.status,
      { error: failure.status === 429 ? 'rate_limited' : 'server_error' },
      failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter },
    )
  }

  /** A webhook as the API shows it: never its account; its secret only when just created. */
  #show(webhook: FakeWebhook, withSecret: boolean) {
    const { account, events, failures, secret, ...shown } = webhook
    return withSecret ? { ...shown, secret } : shown
  }

  #page(account: string, query: URLSearchParams) {
    const limit = Math.min(MAX_PAGE, Math.max(1, Number(query.get('limit') ?? 20) || 20))
    const list = this.all(account).map((w) => ({ w, seq: this.#seq.get(w.id)! }))
    this.counters.examined += list.length
    const after = query.get('after')
    const before = query.get('before')
    let start = 0
    let end = Math.min(list.length, limit)
    for (const cursor of [after, before]) {
      if (cursor !== null && seqOfCursor(cursor) === undefined) return undefined
    }
    if (after !== null) {
      const seq = seqOfCursor(after)!
      start = list.findIndex((e) => e.seq > seq)
      if (start < 0) start = list.length
      end = Math.min(list.length, start + limit)
    } else if (before !== null) {
      const seq = seqOfCursor(before)!
      end = list.findIndex((e) => e.seq >= seq)
      if (end < 0) end = list.length
      start = Math.max(0, end - limit)
    }
    const entries = list.slice(start, end)
    return {
      entries: entries.map((e) => this.#show(e.w, false)),
      metadata: {
        before: start > 0 && entries.length > 0 ? cursorOf(entries[0]!.seq) : null,
        after: end < list.length && entries.length > 0 ? cursorOf(entries.at(-1)!.seq) : null,
        limit,
      },
    }
  }
}
