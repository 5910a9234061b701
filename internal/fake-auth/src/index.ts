import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface TokenServerOptions {
  clientId?: string
  clientSecret?: string
  redirectUri?: string
  expiresIn?: number
  /** Leave refresh_token out of refresh answers. */
  omitRefreshTokenOnRefresh?: boolean
}

type Failure = 500 | 503 | 'malformed' | 'hang'

interface Family {
  account: string
  revoked: boolean
}

/**
 * A strict OAuth 2 token server and `/me` endpoint for tests: single-use codes bound to the
 * redirect URI, single-use rotating refresh tokens whose reuse revokes the whole family,
 * counters, injectable latency and failures.
 */
export async function startTokenServer(options: TokenServerOptions = {}) {
  const clientId = options.clientId ?? 'client-123'
  const clientSecret = options.clientSecret ?? 'client-secret-xyz'
  const redirectUri = options.redirectUri ?? 'http://127.0.0.1:9/callback'
  const codes = new Map<string, { account: string; redirectUri: string; used: boolean }>()
  const refreshTokens = new Map<string, { family: Family; used: boolean }>()
  const accessTokens = new Map<string, { family: Family; expiresAt: number }>()
  const counters = { exchange: 0, refresh: 0, refreshOk: 0, reuse: 0, me: 0 }
  const tokenRequests: Array<{
    headers: IncomingMessage['headers']
    form: Record<string, string>
  }> = []
  const failures: Failure[] = []
  const hanging: ServerResponse[] = []
  const redirectUris = new Set([redirectUri])
  let authorizeMode: 'approve' | 'deny' = 'approve'
  let nextAccount = 'acct_1'
  let latencyMs = 0
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

  function json(
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) {
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body))
  }

  async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
    let text = ''
    for await (const chunk of req) text += chunk
    return Object.fromEntries(new URLSearchParams(text))
  }

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    const form = await readForm(req)
    tokenRequests.push({ headers: req.headers, form })
    if (form.grant_type === 'refresh_token') counters.refresh++
    else counters.exchange++
    if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs))
    const failure = failures.shift()
    if (failure === 'hang') return void hanging.push(res)
    if (failure === 'malformed')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops')
    if (failure !== undefined)
      return json(res, failure, { error: 'server_error', error_description: 'try again' })
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') {
      return json(res, 400, {
        error: 'invalid_request',
        error_description: 'form encoding required',
      })
    }
    if (form.client_id !== clientId || form.client_secret !== clientSecret) {
      return json(res, 401, { error: 'invalid_client' })
    }
    if (form.grant_type === 'authorization_code') {
      const code = codes.get(form.code ?? '')
      if (!code || code.used || code.redirectUri !== form.redirect_uri) {
        if (code) code.used = true
        return json(res, 400, { error: 'invalid_grant', error_description: 'bad code' })
      }
      code.used = true
      const { _refresh, ...body } = issue({ account: code.account, revoked: false })
      return json(res, 200, body)
    }
    if (form.grant_type === 'refresh_token') {
      const entry = refreshTokens.get(form.refresh_token ?? '')
      if (!entry || entry.family.revoked) return json(res, 400, { error: 'invalid_grant' })
      if (entry.used) {
        counters.reuse++
        entry.family.revoked = true
        return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token reused' })
      }
      entry.used = true
      counters.refreshOk++
      const { _refresh, ...body } = issue(entry.family, options.omitRefreshTokenOnRefresh)
      if (options.omitRefreshTokenOnRefresh) {
        // The old refresh token stays valid when no new one is sent.
        entry.used = false
      }
      return json(res, 200, body)
    }
    return json(res, 400, { error: 'unsupported_grant_type' })
  }

  function meEndpoint(req: IncomingMessage, res: ServerResponse) {
    counters.me++
    const auth = req.headers.authorization ?? ''
    const entry = auth.startsWith('Bearer ') ? accessTokens.get(auth.slice(7)) : undefined
    if (!entry || entry.expiresAt <= Date.now()) {
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': 'Bearer error="invalid_token"' },
      )
    }
    return json(res, 200, { id: entry.family.account, name: `User ${entry.family.account}` })
  }

  /** The consent page, auto-answered: approve (code) or deny (`error=access_denied`). */
  function authorizeEndpoint(req: IncomingMessage, res: ServerResponse) {
    const query = new URL(req.url ?? '', 'http://x').searchParams
    const target = query.get('redirect_uri') ?? ''
    if (
      query.get('client_id') !== clientId ||
      query.get('response_type') !== 'code' ||
      !redirectUris.has(target)
    ) {
      // Never redirect to an unregistered URI.
      return void res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('invalid authorization request')
    }
    const back = new URL(target)
    if (authorizeMode === 'deny') back.searchParams.set('error', 'access_denied')
    else {
      const code = token('code')
      codes.set(code, { account: nextAccount, redirectUri: target, used: false })
      back.searchParams.set('code', code)
    }
    const state = query.get('state')
    if (state !== null) back.searchParams.set('state', state)
    res.writeHead(302, { location: back.toString() }).end()
  }

  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (req.method === 'GET' && path === '/oauth/authorize') return authorizeEndpoint(req, res)
    if (req.method === 'POST' && path === '/oauth/token') return void tokenEndpoint(req, res)
    if (req.method === 'GET' && (path === '/me' || path === '/v1/me')) return meEndpoint(req, res)
    json(res, 404, { error: 'not_found' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url,
    clientId,
    clientSecret,
    redirectUri,
    counters,
    tokenRequests,
    /** A code, as if the user approved on the consent page. */
    issueCode(account = 'acct_1', forRedirect = redirectUri): string {
      const code = token('code')
      codes.set(code, { account, redirectUri: forRedirect, used: false })
      return code
    },
    /** Tokens for an account, as if a code had been exchanged. */
    grant(account = 'acct_1') {
      const { _refresh, ...body } = issue({ account, revoked: false })
      return { ...body, refresh_token: _refresh }
    },
    /** Accepts one more redirect URI at the consent page and the token endpoint. */
    allowRedirectUri(uri: string) {
      redirectUris.add(uri)
    },
    /** How the consent page answers, and for which account it approves. */
    setAuthorize(mode: 'approve' | 'deny', account = nextAccount) {
      authorizeMode = mode
      nextAccount = account
    },
    /** The next token requests fail this way, in order. */
    failNext(...modes: Failure[]) {
      failures.push(...modes)
    },
    setLatency(ms: number) {
      latencyMs = ms
    },
    setExpiresIn(seconds: number) {
      expiresIn = seconds
    },
    /** Makes an access token expire now. */
    expireAccessToken(accessToken: string) {
      const entry = accessTokens.get(accessToken)
      if (entry) entry.expiresAt = 0
    },
    isRevoked(refreshToken: string) {
      return refreshTokens.get(refreshToken)?.family.revoked ?? false
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export type TokenServer = Awaited<ReturnType<typeof startTokenServer>>
