import type { LedgerEntry } from '../ledger/entry.js'
import type { RecentAnswer, RecentDropped } from '../ledger/recent.js'
import type { ReplayReport } from '../ledger/replay.js'
import type { LedgerFilter, LedgerPage, LedgerPurged } from '../ledger/store.js'
import type { Logger } from '../log.js'
import type { PageAnswer, PageRequest } from './http.js'

// What the delivery page is made of: the ledger it reads, the options it takes, and its faces
// (a plain answer, Node's `(req, res)`, a Fetch `Request`).

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
  /** Entries per page. Default 50. */
  pageSize?: number
  /** Where a failure to answer (the store failing) is logged. Default the console. */
  logger?: Logger
}

/**
 * What the page reads of the ledger (a `DeliveryLedger` is one): its entries, the requests this
 * process answered without a run, and the purge its button and the CLI send.
 */
export interface PageLedger {
  list(filter: LedgerFilter): Promise<LedgerPage>
  get(id: string): Promise<LedgerEntry | undefined>
  /** Requests this process answered without a run (refused, duplicate). */
  recent(): readonly RecentAnswer[]
  /** How many of those it no longer holds. */
  recentDropped(): RecentDropped
  /** Drops what retention says is over, or every body of one account. */
  purge(options: { account?: string }): Promise<LedgerPurged>
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
export interface Allowed {
  request: PageRequest
  session: string
  url: URL
  asJson: boolean
}

/** A request's body, read only once allowed: `undefined` when it is over `MAX_FORM`. */
export type BodyOf = () => Promise<string | undefined>
