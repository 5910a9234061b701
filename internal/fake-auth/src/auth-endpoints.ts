import { createHash } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type AuthState, accountOf, issue, newFamily, token } from './auth-state.js'
import { json, readText } from './http.js'

// The authorization server's endpoints: the authorize step and its consent page, the token
// endpoint (strict: single-use codes and rotating refresh tokens), and GET /me.

const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c]!)

export function redirectBack(
  _st: AuthState,
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

export function approve(
  st: AuthState,
  res: ServerResponse,
  target: string,
  query: URLSearchParams,
  account: string,
) {
  const code = token('code')
  const challenge = query.get('code_challenge') ?? undefined
  const state = query.get('state')
  st.codes.set(code, { account, redirectUri: target, used: false, challenge })
  redirectBack(st, res, target, state, { code })
}

export function page(
  _st: AuthState,
  res: ServerResponse,
  status: number,
  title: string,
  body: string,
) {
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

export function consentPage(st: AuthState, res: ServerResponse, query: URLSearchParams) {
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
  const app = st.options.appName ?? `Application ${st.clientId}`
  page(
    st,
    res,
    200,
    'Authorize access',
    `<h1 id="consent-title">${esc(app)} wants to connect to your scheduling account</h1>` +
      `<p>It will be able to read your scheduling account and act for you. Application: <code id="consent-client">${esc(st.clientId)}</code>.</p>` +
      `<p>Whatever you choose, you will be sent back to <strong id="consent-origin">${esc(target.host)}</strong> ` +
      `(<code id="consent-redirect">${esc(target.origin + target.pathname)}</code>).</p>` +
      `<form method="post" action="/oauth/authorize">${hidden}` +
      `<label>Account <input name="account" id="consent-account" value="${esc(query.get('login_hint') || st.nextAccount)}"></label>` +
      '<p><button name="decision" value="allow" id="allow">Allow</button> ' +
      '<button name="decision" value="deny" id="deny">Deny</button></p></form>',
  )
}

/**
 * What is wrong with an authorization request, naming the parameter, or `undefined`. Such a
 * request is answered on this page, never redirected (the redirect URI may be an attacker's).
 */
export function authorizeProblem(
  st: AuthState,
  query: URLSearchParams,
  checkResponseType = true,
): string | undefined {
  const given = query.get('client_id')
  if (given === null || given === '') return 'The request has no client_id.'
  if (given !== st.clientId)
    return `Unknown client_id "${given}": no application is registered with it.`
  const target = query.get('redirect_uri')
  if (target === null || target === '') return 'The request has no redirect_uri.'
  if (!st.redirectUris.has(target)) {
    return `redirect_uri "${target}" is not registered for application ${st.clientId}. Registered: ${[...st.redirectUris].join(', ') || 'none'}.`
  }
  if (checkResponseType && query.get('response_type') !== 'code') {
    return `response_type must be "code", got "${query.get('response_type') ?? ''}".`
  }
  const challenge = query.get('code_challenge')
  if (challenge !== null || st.requirePkce) {
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
export function refuse(st: AuthState, res: ServerResponse, problem: string) {
  page(
    st,
    res,
    400,
    'Invalid authorization request',
    `<h1>Invalid authorization request</h1><p id="authorize-error">${esc(problem)}</p>`,
  )
}

/** `GET /oauth/authorize`: validates the request, then consent page or immediate answer. */
export function authorizeEndpoint(st: AuthState, req: IncomingMessage, res: ServerResponse) {
  st.counters.authorize++
  const query = new URL(req.url ?? '', 'http://x').searchParams
  const target = query.get('redirect_uri') ?? ''
  const problem = authorizeProblem(st, query)
  // Never redirect to an unregistered URI.
  if (problem !== undefined) return refuse(st, res, problem)
  if (st.authorizeMode === 'consent') return consentPage(st, res, query)
  if (st.authorizeMode === 'deny')
    return redirectBack(st, res, target, query.get('state'), {
      error: 'access_denied',
      error_description: 'The account owner denied the request.',
    })
  // A login hint names the account to approve as, when no consent page asks.
  approve(st, res, target, query, query.get('login_hint') || st.nextAccount)
}

/** `POST /oauth/authorize`: the consent page's answer. */
export async function decisionEndpoint(st: AuthState, req: IncomingMessage, res: ServerResponse) {
  const form = new URLSearchParams(await readText(req))
  const target = form.get('redirect_uri') ?? ''
  const problem = authorizeProblem(st, form, false)
  if (problem !== undefined) return refuse(st, res, problem)
  if (form.get('decision') !== 'allow')
    return redirectBack(st, res, target, form.get('state'), {
      error: 'access_denied',
      error_description: 'The account owner denied the request.',
    })
  approve(st, res, target, form, form.get('account') || st.nextAccount)
}

/**
 * The client's credentials: `client_secret_basic` (RFC 6749 2.3.1: an `Authorization: Basic`
 * header of the form-encoded id and secret) or `client_secret_post` (in the body); `'both'`
 * when a request uses the two at once, which the RFC forbids.
 */
function clientOf(
  authorization: string | undefined,
  form: Record<string, string>,
): { id: string | undefined; secret: string | undefined } | 'both' | undefined {
  const inBody = form.client_secret !== undefined
  if (authorization?.startsWith('Basic ')) {
    if (inBody) return 'both'
    const text = Buffer.from(authorization.slice(6).trim(), 'base64').toString()
    const colon = text.indexOf(':')
    if (colon < 0) return undefined
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '))
      } catch {
        return undefined
      }
    }
    const id = decode(text.slice(0, colon))
    if (form.client_id !== undefined && form.client_id !== id) return undefined
    return { id, secret: decode(text.slice(colon + 1)) }
  }
  return { id: form.client_id, secret: form.client_secret }
}

export async function tokenEndpoint(st: AuthState, req: IncomingMessage, res: ServerResponse) {
  const form = Object.fromEntries(new URLSearchParams(await readText(req)))
  st.tokenRequests.push({ headers: req.headers, form, at: Date.now() })
  if (form.grant_type === 'refresh_token') st.counters.refresh++
  else st.counters.exchange++
  if (st.latencyMs > 0 && st.latencyOn === 'every')
    await new Promise((r) => setTimeout(r, st.latencyMs))
  const failure = st.failures.shift() ?? st.down
  if (failure === 'hang') return void st.hanging.push(res)
  if (failure === 'malformed')
    return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops')
  if (typeof failure === 'object')
    return json(res, failure.status, failure.body, failure.headers ?? {})
  if (failure !== undefined)
    return json(res, failure, { error: 'server_error', error_description: 'try again' })
  if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') {
    return json(res, 400, {
      error: 'invalid_request',
      error_description: 'form encoding required',
    })
  }
  const client = clientOf(req.headers.authorization, form)
  if (client === 'both')
    return json(res, 400, {
      error: 'invalid_request',
      error_description: 'client authenticated twice (Basic and in the body)',
    })
  if (client?.id !== st.clientId || client.secret !== st.clientSecret)
    return json(
      res,
      401,
      { error: 'invalid_client' },
      req.headers.authorization?.startsWith('Basic ')
        ? { 'www-authenticate': 'Basic realm="token"' }
        : {},
    )
  if (form.grant_type === 'authorization_code') {
    const code = st.codes.get(form.code ?? '')
    if (!code || code.used || code.redirectUri !== form.redirect_uri) {
      if (code) {
        // RFC 6749 4.1.2: a code used twice revokes the tokens issued from it.
        if (code.used && code.family !== undefined && !code.family.revoked) {
          code.family.revoked = true
          st.counters.revoked++
          st.counters.codeReuse++
        }
        code.used = true
      }
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
        st.counters.pkceRefused++
        return json(res, 400, {
          error: 'invalid_grant',
          error_description:
            verifier === undefined ? 'code_verifier required' : 'code_verifier does not match',
        })
      }
    }
    code.used = true
    code.family = newFamily(st, code.account)
    const { _refresh, ...body } = issue(st, code.family)
    return json(res, 200, body)
  }
  if (form.grant_type === 'refresh_token') {
    const entry = st.refreshTokens.get(form.refresh_token ?? '')
    if (!entry || entry.family.revoked) return json(res, 400, { error: 'invalid_grant' })
    const graceMs = st.options.reuseGraceMs ?? 0
    if (entry.used && entry.spentAt !== undefined && Date.now() - entry.spentAt < graceMs) {
      st.counters.graceReuse++
      st.counters.refreshOk++
      const { _refresh, ...body } = issue(st, entry.family, st.options.omitRefreshTokenOnRefresh)
      if (st.latencyMs > 0 && st.latencyOn === 'success')
        await new Promise((r) => setTimeout(r, st.latencyMs))
      return json(res, 200, body)
    }
    if (entry.used) {
      st.counters.reuse++
      if (st.options.reuseRevokesFamily !== false) {
        entry.family.revoked = true
        st.counters.revoked++
      }
      return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token reused' })
    }
    entry.used = true
    entry.spentAt = Date.now()
    st.counters.refreshOk++
    const { _refresh, ...body } = issue(st, entry.family, st.options.omitRefreshTokenOnRefresh)
    // The old refresh token stays valid when no new one is sent.
    if (st.options.omitRefreshTokenOnRefresh) entry.used = false
    // Spent at once, answered late: a refusal of the same token meanwhile is answered first.
    if (st.latencyMs > 0 && st.latencyOn === 'success')
      await new Promise((r) => setTimeout(r, st.latencyMs))
    return json(res, 200, body)
  }
  return json(res, 400, { error: 'unsupported_grant_type' })
}

export function meEndpoint(st: AuthState, req: IncomingMessage, res: ServerResponse) {
  st.counters.me++
  const account = accountOf(st, req.headers.authorization)
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
