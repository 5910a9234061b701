import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { json, readText } from './http.js'
import { WebhookRegistry } from './webhooks.js'

// The webhook API's types live here, not in ./webhooks: @scheduling-kit/testing inlines this
// file's declarations into its own, and a relative import would be left dangling there.
/** A webhook of the fake service, as it keeps it (the API shows it without `account` and `events`). */
export interface FakeWebhook {
  id: string
  url: string
  secret: string
  state: 'active' | 'disabled' | 'deleted'
  /** The account whose events it receives; `undefined` for an app-wide webhook made by the control API. */
  account: string | undefined
  /** Event types it receives; all when empty. */
  events: string[]
  version: string
  created_at: string
  /** Failed deliveries in a row (a success resets it). */
  failures: number
}

/** Answers the next API requests with a failure instead (see `failApi`). */
export interface ApiFailure {
  /** The status answered: 429, 500, 502, 503, ... */
  status: number
  /** How many requests in a row. Default 1. */
  count?: number
  /** A `Retry-After` header (seconds, or an HTTP date); none when absent. */
  retryAfter?: string
  /** Only requests of this method. Default any. */
  method?: string
  /**
   * The request is carried out before the failure is answered (a create that landed, a delete
   * that happened), as when a gateway loses the answer. Default false.
   */
  landed?: boolean
  /** Hold the answer this long first, in ms (a client's time-out). */
  delayMs?: number
}

/** What the API has answered, by status, and how many requests of each kind it took. */
export interface ApiCounters {
  requests: number
  byStatus: Record<number, number>
  created: number
  deleted: number
  listed: number
}

/** The accounts' webhooks and the webhook API's switches, as the fake service exposes them. */
export interface WebhookApi {
  readonly counters: ApiCounters
  /** Makes a webhook (the API's create, or the control API's with an id or secret of its own). */
  create(input: {
    url: string
    account?: string
    secret?: string
    id?: string
    events?: string[]
  }): FakeWebhook
  get(id: string): FakeWebhook | undefined
  /** Every webhook, oldest first; of one account when given (`null`: the app-wide ones). */
  all(account?: string | null): FakeWebhook[]
  /** Removes a webhook as the API's delete does. */
  remove(id: string): FakeWebhook | undefined
  /** Sets a webhook's state, as the service does on its own (`disabled` after failures, say). */
  setState(id: string, state: FakeWebhook['state']): boolean
  /** The next API requests (of `method`, when given) fail this way. */
  failApi(failure: ApiFailure): void
  /** Answers `/v1/webhooks` and `/v1/webhooks/{id}`; `false` for any other path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
}

export interface AuthServiceOptions {
  clientId?: string
  clientSecret?: string
  /** Redirect URIs registered for the client; more with `allowRedirectUri`. */
  redirectUris?: string[]
  /** `expires_in` of new access tokens, in seconds. Default 7200. */
  expiresIn?: number
  /** Leave refresh_token out of refresh answers. */
  omitRefreshTokenOnRefresh?: boolean
  /** How `/oauth/authorize` answers: a consent page, or approve / deny at once. Default `approve`. */
  authorize?: AuthorizeMode
  /** The application's name on the consent page. */
  appName?: string
  /**
   * Whether presenting a spent refresh token revokes its whole family (OAuth 2.1 advice).
   * Default true. Either way a spent refresh token is refused with `invalid_grant`.
   */
  reuseRevokesFamily?: boolean
  /**
   * A reuse grace period, in ms, as many real servers offer (Okta, Auth0's reuse interval): a
   * spent refresh token presented again within this time of its first use is answered with new
   * tokens of the same family, not refused. Counted in `counters.graceReuse`. Default 0: strict
   * rotation, a spent token is refused at once.
   */
  reuseGraceMs?: number
  /**
   * PKCE (RFC 7636): every authorization request must carry an S256 `code_challenge`, and its
   * code is exchanged only with the matching `code_verifier`. Default true.
   */
  requirePkce?: boolean
}

export type AuthorizeMode = 'consent' | 'approve' | 'deny'
/** A failure to answer with: a status, a malformed page, no answer, or an answer of your own. */
export type AuthFailure = 500 | 503 | 'malformed' | 'hang' | { status: number; body: unknown }
type Failure = AuthFailure

/** How many requests of each kind the server has answered. */
export interface AuthCounters {
  authorize: number
  exchange: number
  refresh: number
  refreshOk: number
  reuse: number
  /** Spent refresh tokens answered with new tokens inside `reuseGraceMs`. */
  graceReuse: number
  revoked: number
  me: number
  /** Code exchanges refused for a missing or wrong PKCE verifier. */
  pkceRefused: number
}

/** A token endpoint answer (section 2.3 of the spec). */
export interface TokenResponseBody {
  access_token: string
  refresh_token: string
  expires_in: number
  token_type: string
}

/** The fake authorization server: its endpoints, counters and controls for tests. */
export interface AuthService {
  readonly clientId: string
  readonly clientSecret: string
  readonly counters: AuthCounters
  /** Every token request received, oldest first. */
  readonly tokenRequests: TokenRequest[]
  /** The account an `Authorization: Bearer` value belongs to, if it is valid now. */
  accountOf(authorization: string | undefined): string | undefined
  /** Answers the service's OAuth, `/me` and `/v1/webhooks` paths; `false` for any other. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<boolean>
  /** The accounts' webhooks and the webhook API's switches (`failApi`) and counters. */
  readonly webhooks: WebhookApi
  /**
   * A code, as if the user approved on the consent page. With `codeChallenge` (S256), its
   * exchange needs the matching verifier; without, the exchange checks none (a test's stand-in
   * for a sign-in whose verifier it does not know).
   */
  issueCode(account?: string, forRedirect?: string, codeChallenge?: string): string
  /** Tokens for an account, as if a code had been exchanged. */
  grant(account?: string): TokenResponseBody
  /** Accepts one more redirect URI at the consent page and the token endpoint. */
  allowRedirectUri(uri: string): void
  /** How the consent page answers, and for which account it approves. */
  setAuthorize(mode: AuthorizeMode, account?: string): void
  /** A personal access token for an account. */
  addPersonalAccessToken(value: string, account: string): void
  /** The next token requests fail this way, in order. */
  failNext(...modes: AuthFailure[]): void
  /**
   * Delays token answers: every request before it is looked at (`every`, the default), or
   * only successful refreshes after the refresh token is spent (`success`).
   */
  setLatency(ms: number, on?: 'every' | 'success'): void
  setExpiresIn(seconds: number): void
  /** Makes one access token, or every access token of an account, expire now. */
  expireAccessToken(tokenOrAccount: string): void
  /** Revokes every grant of an account: its refresh and access tokens stop working. */
  revokeGrant(account: string): void
  isRevoked(refreshToken: string): boolean
  /** Whether a refresh token would be accepted now: known, unspent, its family not revoked. */
  isRefreshTokenValid(refreshToken: string): boolean
  /** Ends answers held by `failNext('hang')`. */
  releaseHanging(): void
  /** Every account that was granted tokens: its grants, revoked or not, and live access tokens. */
  accounts(): AccountGrants[]
}

/** What the dashboard shows of an account's grants. */
export interface AccountGrants {
  account: string
  grants: number
  revoked: number
  /** Access tokens not expired and not revoked. */
  liveAccessTokens: number
}

interface Family {
  account: string
  revoked: boolean
}

export interface TokenRequest {
  headers: IncomingMessage['headers']
  form: Record<string, string>
}

const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c]!)

/**
 * A strict OAuth 2 authorization server and `/me` endpoint: single-use codes bound to the
 * redirect URI, single-use rotating refresh tokens whose reuse revokes the whole family, a
 * consent page, personal access tokens, counters, injectable latency and failures.
 * `handle(req, res)` answers its own paths and resolves to `false` for any other.
 */
export function createAuthService(options: AuthServiceOptions = {}): AuthService {
  const clientId = options.clientId ?? 'client-123'
  const clientSecret = options.clientSecret ?? 'client-secret-xyz'
  const redirectUris = new Set(options.redirectUris ?? ['http://127.0.0.1:9/callback'])
  const codes = new Map<
    string,
    { account: string; redirectUri: string; used: boolean; challenge: string | undefined }
  >()
  const requirePkce = options.requirePkce !== false
  const refreshTokens = new Map<string, { family: Family; used: boolean; spentAt?: number }>()
  const accessTokens = new Map<string, { family: Family; expiresAt: number }>()
  const personalTokens = new Map<string, string>()
  const families: Family[] = []
  const counters = {
    authorize: 0,
    exchange: 0,
    refresh: 0,
    refreshOk: 0,
    reuse: 0,
    graceReuse: 0,
    revoked: 0,
    me: 0,
    pkceRefused: 0,
  }
  const tokenRequests: TokenRequest[] = []
  const failures: Failure[] = []
  const hanging: ServerResponse[] = []
  let authorizeMode: AuthorizeMode = options.authorize ?? 'approve'
  let nextAccount = 'acct_1'
  let latencyMs = 0
  let latencyOn: 'every' | 'success' = 'every'
  let expiresIn = options.expiresIn ?? 7200

  const token = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

  function issue(family: Family, omitRefresh = false) {
    const accessToken = token('at')
    const refreshToken = token('rt')
    accessTokens.set(accessToken, { family, expiresAt: Date.now() + expiresIn * 1000 })
    refreshTokens.set(refreshToken, { family, used: false })
    return {
      access_token: accessToken,
      ...(omitRefresh ? {} : { refresh_token: refreshToken }),
      expires_in: expiresIn,
      token_type: 'bearer',
      _refresh: refreshToken,
    }
  }

  function newFamily(account: string): Family {
    const family = { account, revoked: false }
    families.push(family)
    return family
  }

  function redirectBack(
    res: ServerResponse,
    target: string,
    state: string | null,
    params: Record<string, string>,
  ) {
    const back = new URL(target)
    for (const [k, v] of Object.entries(params)) back.searchParams.set(k, v)
    if (state !== null) back.searchParams.set('state', state)
    res.writeHead(302, { location: back.toString(), 'cache-control': 'no-store' }).end()
  }

  function approve(res: ServerResponse, target: string, query: URLSearchParams, account: string) {
    const code = token('code')
    const challenge = query.get('code_challenge') ?? undefined
    const state = query.get('state')
    codes.set(code, { account, redirectUri: target, used: false, challenge })
    redirectBack(res, target, state, { code })
  }

  function page(res: ServerResponse, status: number, title: string, body: string) {
    res
      .writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      })
      .end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title></head>` +
          '<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem">' +
          `${body}</body></html>`,
      )
  }

  function consentPage(res: ServerResponse, query: URLSearchParams) {
    const hidden = [
      'client_id',
      'redirect_uri',
      'state',
      'response_type',
      'code_challenge',
      'code_challenge_method',
    ]
      .map((k) => `<input type="hidden" name="${k}" value="${esc(query.get(k) ?? '')}">`)
      .join('')
    const target = new URL(query.get('redirect_uri') ?? '')
    const app = options.appName ?? `Application ${clientId}`
    page(
      res,
      200,
      'Authorize access',
      `<h1 id="consent-title">${esc(app)} wants to connect to your scheduling account</h1>` +
        `<p>It will be able to read your scheduling account and act for you. Application: <code id="consent-client">${esc(clientId)}</code>.</p>` +
        `<p>Whatever you choose, you will be sent back to <strong id="consent-origin">${esc(target.host)}</strong> ` +
        `(<code id="consent-redirect">${esc(target.origin + target.pathname)}</code>).</p>` +
        `<form method="post" action="/oauth/authorize">${hidden}` +
        `<label>Account <input name="account" id="consent-account" value="${esc(query.get('login_hint') || nextAccount)}"></label>` +
        '<p><button name="decision" value="allow" id="allow">Allow</button> ' +
        '<button name="decision" value="deny" id="deny">Deny</button></p></form>',
    )
  }

  /**
   * What is wrong with an authorization request, naming the parameter, or `undefined`. Such a
   * request is answered on this page, never redirected (the redirect URI may be an attacker's).
   */
  function authorizeProblem(query: URLSearchParams, checkResponseType = true): string | undefined {
    const given = query.get('client_id')
    if (given === null || given === '') return 'The request has no client_id.'
    if (given !== clientId)
      return `Unknown client_id "${given}": no application is registered with it.`
    const target = query.get('redirect_uri')
    if (target === null || target === '') return 'The request has no redirect_uri.'
    if (!redirectUris.has(target)) {
      return `redirect_uri "${target}" is not registered for application ${clientId}. Registered: ${[...redirectUris].join(', ') || 'none'}.`
    }
    if (checkResponseType && query.get('response_type') !== 'code') {
      return `response_type must be "code", got "${query.get('response_type') ?? ''}".`
    }
    const challenge = query.get('code_challenge')
    if (challenge !== null || requirePkce) {
      if (challenge === null || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
        return 'PKCE is required: the request needs a code_challenge, the base64url SHA-256 of a code verifier (RFC 7636).'
      }
      if (query.get('code_challenge_method') !== 'S256') {
        return `code_challenge_method must be "S256", got "${query.get('code_challenge_method') ?? ''}".`
      }
    }
    return undefined
  }

  /** An authorization request refused on this page, naming what is wrong. */
  function refuse(res: ServerResponse, problem: string) {
    page(
      res,
      400,
      'Invalid authorization request',
      `<h1>Invalid authorization request</h1><p id="authorize-error">${esc(problem)}</p>`,
    )
  }

  /** `GET /oauth/authorize`: validates the request, then consent page or immediate answer. */
  function authorizeEndpoint(req: IncomingMessage, res: ServerResponse) {
    counters.authorize++
    const query = new URL(req.url ?? '', 'http://x').searchParams
    const target = query.get('redirect_uri') ?? ''
    const problem = authorizeProblem(query)
    // Never redirect to an unregistered URI.
    if (problem !== undefined) return refuse(res, problem)
    if (authorizeMode === 'consent') return consentPage(res, query)
    if (authorizeMode === 'deny')
      return redirectBack(res, target, query.get('state'), {
        error: 'access_denied',
        error_description: 'The account owner denied the request.',
      })
    // A login hint names the account to approve as, when no consent page asks.
    approve(res, target, query, query.get('login_hint') || nextAccount)
  }

  /** `POST /oauth/authorize`: the consent page's answer. */
  async function decisionEndpoint(req: IncomingMessage, res: ServerResponse) {
    const form = new URLSearchParams(await readText(req))
    const target = form.get('redirect_uri') ?? ''
    const problem = authorizeProblem(form, false)
    if (problem !== undefined) return refuse(res, problem)
    if (form.get('decision') !== 'allow')
      return redirectBack(res, target, form.get('state'), {
        error: 'access_denied',
        error_description: 'The account owner denied the request.',
      })
    approve(res, target, form, form.get('account') || nextAccount)
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    const form = Object.fromEntries(new URLSearchParams(await readText(req)))
    tokenRequests.push({ headers: req.headers, form })
    if (form.grant_type === 'refresh_token') counters.refresh++
    else counters.exchange++
    if (latencyMs > 0 && latencyOn === 'every') await new Promise((r) => setTimeout(r, latencyMs))
    const failure = failures.shift()
    if (failure === 'hang') return void hanging.push(res)
    if (failure === 'malformed')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops')
    if (typeof failure === 'object') return json(res, failure.status, failure.body)
    if (failure !== undefined)
      return json(res, failure, { error: 'server_error', error_description: 'try again' })
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') {
      return json(res, 400, {
        error: 'invalid_request',
        error_description: 'form encoding required',
      })
    }
    if (form.client_id !== clientId || form.client_secret !== clientSecret)
      return json(res, 401, { error: 'invalid_client' })
    if (form.grant_type === 'authorization_code') {
      const code = codes.get(form.code ?? '')
      if (!code || code.used || code.redirectUri !== form.redirect_uri) {
        if (code) code.used = true
        return json(res, 400, { error: 'invalid_grant', error_description: 'bad code' })
      }
      if (code.challenge !== undefined) {
        const verifier = form.code_verifier
        const proof =
          verifier === undefined
            ? undefined
            : createHash('sha256').update(verifier).digest('base64url')
        if (proof !== code.challenge) {
          // A failed proof spends the code: it may have leaked.
          code.used = true
          counters.pkceRefused++
          return json(res, 400, {
            error: 'invalid_grant',
            error_description:
              verifier === undefined ? 'code_verifier required' : 'code_verifier does not match',
          })
        }
      }
      code.used = true
      const { _refresh, ...body } = issue(newFamily(code.account))
      return json(res, 200, body)
    }
    if (form.grant_type === 'refresh_token') {
      const entry = refreshTokens.get(form.refresh_token ?? '')
      if (!entry || entry.family.revoked) return json(res, 400, { error: 'invalid_grant' })
      const graceMs = options.reuseGraceMs ?? 0
      if (entry.used && entry.spentAt !== undefined && Date.now() - entry.spentAt < graceMs) {
        counters.graceReuse++
        counters.refreshOk++
        const { _refresh, ...body } = issue(entry.family, options.omitRefreshTokenOnRefresh)
        if (latencyMs > 0 && latencyOn === 'success')
          await new Promise((r) => setTimeout(r, latencyMs))
        return json(res, 200, body)
      }
      if (entry.used) {
        counters.reuse++
        if (options.reuseRevokesFamily !== false) {
          entry.family.revoked = true
          counters.revoked++
        }
        return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token reused' })
      }
      entry.used = true
      entry.spentAt = Date.now()
      counters.refreshOk++
      const { _refresh, ...body } = issue(entry.family, options.omitRefreshTokenOnRefresh)
      // The old refresh token stays valid when no new one is sent.
      if (options.omitRefreshTokenOnRefresh) entry.used = false
      // Spent at once, answered late: a refusal of the same token meanwhile is answered first.
      if (latencyMs > 0 && latencyOn === 'success')
        await new Promise((r) => setTimeout(r, latencyMs))
      return json(res, 200, body)
    }
    return json(res, 400, { error: 'unsupported_grant_type' })
  }

  /** The account a bearer token belongs to, if it is valid now. */
  function accountOf(authorization: string | undefined): string | undefined {
    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined
    if (bearer === undefined) return undefined
    const personal = personalTokens.get(bearer)
    if (personal !== undefined) return personal
    const entry = accessTokens.get(bearer)
    return entry && !entry.family.revoked && entry.expiresAt > Date.now()
      ? entry.family.account
      : undefined
  }

  function meEndpoint(req: IncomingMessage, res: ServerResponse) {
    counters.me++
    const account = accountOf(req.headers.authorization)
    if (account === undefined) {
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': 'Bearer error="invalid_token"' },
      )
    }
    return json(res, 200, {
      id: account,
      name: `User ${account}`,
      email: `${account}@example.test`,
    })
  }

  const webhooks = new WebhookRegistry(accountOf)

  return {
    clientId,
    clientSecret,
    counters,
    tokenRequests,
    accountOf,
    webhooks,
    /** Answers the service's OAuth, `/me` and `/v1/webhooks` paths; `false` for any other. */
    async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
      if (await webhooks.handle(req, res)) return true
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path === '/oauth/authorize') authorizeEndpoint(req, res)
      else if (req.method === 'POST' && path === '/oauth/authorize')
        await decisionEndpoint(req, res)
      else if (req.method === 'POST' && path === '/oauth/token') await tokenEndpoint(req, res)
      else if (req.method === 'GET' && (path === '/me' || path === '/v1/me')) meEndpoint(req, res)
      else return false
      return true
    },
    /** A code, as if the user approved on the consent page. */
    issueCode(
      account = 'acct_1',
      forRedirect = [...redirectUris][0]!,
      codeChallenge?: string,
    ): string {
      const code = token('code')
      codes.set(code, { account, redirectUri: forRedirect, used: false, challenge: codeChallenge })
      return code
    },
    /** Tokens for an account, as if a code had been exchanged. */
    grant(account = 'acct_1') {
      const { _refresh, ...body } = issue(newFamily(account))
      return { ...body, refresh_token: _refresh }
    },
    /** Accepts one more redirect URI at the consent page and the token endpoint. */
    allowRedirectUri(uri: string) {
      redirectUris.add(uri)
    },
    /** How the consent page answers, and for which account it approves. */
    setAuthorize(mode: AuthorizeMode, account = nextAccount) {
      authorizeMode = mode
      nextAccount = account
    },
    /** A personal access token for an account. */
    addPersonalAccessToken(value: string, account: string) {
      personalTokens.set(value, account)
    },
    /** The next token requests fail this way, in order. */
    failNext(...modes: Failure[]) {
      failures.push(...modes)
    },
    /**
     * Delays token answers: every request before it is looked at (`every`, the default), or
     * only successful refreshes after the refresh token is spent (`success`: a concurrent
     * refusal of the same token then arrives before the new tokens do).
     */
    setLatency(ms: number, on: 'every' | 'success' = 'every') {
      latencyMs = ms
      latencyOn = on
    },
    setExpiresIn(seconds: number) {
      expiresIn = seconds
    },
    /** Makes one access token, or every access token of an account, expire now. */
    expireAccessToken(tokenOrAccount: string) {
      for (const [value, entry] of accessTokens) {
        if (value === tokenOrAccount || entry.family.account === tokenOrAccount) entry.expiresAt = 0
      }
    },
    /** Revokes every grant of an account: its refresh and access tokens stop working. */
    revokeGrant(account: string) {
      for (const family of families) {
        if (family.account === account) {
          family.revoked = true
          counters.revoked++
        }
      }
    },
    accounts() {
      const byAccount = new Map<string, AccountGrants>()
      for (const family of families) {
        const entry = byAccount.get(family.account) ?? {
          account: family.account,
          grants: 0,
          revoked: 0,
          liveAccessTokens: 0,
        }
        entry.grants++
        if (family.revoked) entry.revoked++
        byAccount.set(family.account, entry)
      }
      const now = Date.now()
      for (const { family, expiresAt } of accessTokens.values()) {
        if (!family.revoked && expiresAt > now) byAccount.get(family.account)!.liveAccessTokens++
      }
      return [...byAccount.values()]
    },
    isRevoked(refreshToken: string) {
      return refreshTokens.get(refreshToken)?.family.revoked ?? false
    },
    /** Whether a refresh token would be accepted now: known, unspent, its family not revoked. */
    isRefreshTokenValid(refreshToken: string) {
      const entry = refreshTokens.get(refreshToken)
      return entry !== undefined && !entry.used && !entry.family.revoked
    },
    /** Ends answers held by `failNext('hang')`. */
    releaseHanging() {
      for (const res of hanging.splice(0)) res.destroy()
    },
  }
}

/** The auth service alone on a loopback port, for tests. */
export async function startTokenServer(
  options: AuthServiceOptions & { redirectUri?: string } = {},
) {
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:9/callback'
  const service = createAuthService({
    ...options,
    redirectUris: [redirectUri, ...(options.redirectUris ?? [])],
  })
  const server = createServer(async (req, res) => {
    if (!(await service.handle(req, res))) json(res, 404, { error: 'not_found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return Object.assign(service, {
    url,
    redirectUri,
    close: () =>
      new Promise<void>((resolve) => {
        service.releaseHanging()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
}

export type TokenServer = Awaited<ReturnType<typeof startTokenServer>>
