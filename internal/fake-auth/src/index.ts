import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type {
  AccountGrants,
  AuthFailure,
  AuthorizeMode,
  AuthService,
  AuthServiceOptions,
} from '@scheduling-kit/fake-auth/types'
import { authorizeEndpoint, decisionEndpoint, meEndpoint, tokenEndpoint } from './auth-endpoints.js'
import {
  type AuthState,
  accountOf,
  createAuthState,
  issue,
  newFamily,
  token,
} from './auth-state.js'
import { json } from './http.js'

// The types live in ./types.ts, named through the package's own `types` subpath, not a
// relative path: @scheduling-kit/testing inlines these declarations into its own, and a
// relative import would be left dangling there.
export type {
  AccountGrants,
  ApiCounters,
  ApiFailure,
  AuthCounters,
  AuthFailure,
  AuthorizeMode,
  AuthService,
  AuthServiceOptions,
  FakeWebhook,
  TokenRequest,
  TokenResponseBody,
  WebhookApi,
} from '@scheduling-kit/fake-auth/types'

/**
 * A strict OAuth 2 authorization server and `/me` endpoint: single-use codes bound to the
 * redirect URI, single-use rotating refresh tokens whose reuse revokes the whole family, a
 * consent page, personal access tokens, counters, injectable latency and failures.
 * `handle(req, res)` answers its own paths and resolves to `false` for any other.
 */
export function createAuthService(options: AuthServiceOptions = {}): AuthService {
  const st = createAuthState(options)
  return { ...serviceEndpoints(st), ...serviceControls(st) }
}

/** The service's handler and what it issues as if a user had gone through it. */
function serviceEndpoints(st: AuthState) {
  return {
    clientId: st.clientId,
    clientSecret: st.clientSecret,
    counters: st.counters,
    tokenRequests: st.tokenRequests,
    accountOf: (authorization: string | undefined) => accountOf(st, authorization),
    webhooks: st.webhooks,
    /** Answers the service's OAuth, `/me` and `/v1/webhooks` paths; `false` for any other. */
    async handle(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
      if (await st.webhooks.handle(req, res)) return true
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path === '/oauth/authorize') authorizeEndpoint(st, req, res)
      else if (req.method === 'POST' && path === '/oauth/authorize')
        await decisionEndpoint(st, req, res)
      else if (req.method === 'POST' && path === '/oauth/token') await tokenEndpoint(st, req, res)
      else if (req.method === 'GET' && (path === '/me' || path === '/v1/me'))
        meEndpoint(st, req, res)
      else return false
      return true
    },
    /** A code, as if the user approved on the consent page. */
    issueCode(
      account = 'acct_1',
      forRedirect = [...st.redirectUris][0]!,
      codeChallenge?: string,
    ): string {
      const code = token('code')
      st.codes.set(code, {
        account,
        redirectUri: forRedirect,
        used: false,
        challenge: codeChallenge,
      })
      return code
    },
    /** Tokens for an account, as if a code had been exchanged. */
    grant(account = 'acct_1') {
      const { _refresh, ...body } = issue(st, newFamily(st, account))
      return { ...body, refresh_token: _refresh }
    },
  }
}

/** The test controls: redirect URIs, consent, latency, failures, expiries, revocations. */
function serviceControls(st: AuthState) {
  return {
    /** Accepts one more redirect URI at the consent page and the token endpoint. */
    allowRedirectUri(uri: string) {
      st.redirectUris.add(uri)
    },
    /** How the consent page answers, and for which account it approves. */
    setAuthorize(mode: AuthorizeMode, account = st.nextAccount) {
      st.authorizeMode = mode
      st.nextAccount = account
    },
    /** A personal access token for an account. */
    addPersonalAccessToken(value: string, account: string) {
      st.personalTokens.set(value, account)
    },
    /** The next token requests fail this way, in order. */
    failNext(...modes: AuthFailure[]) {
      st.failures.push(...modes)
    },
    /** Every token request answers `failure` until called with `undefined`. */
    setDown(failure: AuthFailure | undefined) {
      st.down = failure
    },
    /** Clears the token endpoint's queued failures (`failNext`) and the API's (`failApi`). */
    clearFailures() {
      st.failures.length = 0
      st.webhooks.failApi({ status: 500, count: 0 })
    },
    /**
     * Delays token answers: every request before it is looked at (`every`, the default), or
     * only successful refreshes after the refresh token is spent (`success`: a concurrent
     * refusal of the same token then arrives before the new tokens do).
     */
    setLatency(ms: number, on: 'every' | 'success' = 'every') {
      st.latencyMs = ms
      st.latencyOn = on
    },
    setExpiresIn(seconds: number) {
      st.expiresIn = seconds
    },
    /** Makes one access token, or every access token of an account, expire now. */
    expireAccessToken(tokenOrAccount: string) {
      const one = st.accessTokens.get(tokenOrAccount)
      if (one !== undefined) one.expiresAt = 0
      for (const family of st.familiesByAccount.get(tokenOrAccount) ?? [])
        for (const value of family.accessTokens) st.accessTokens.get(value)!.expiresAt = 0
    },
    /** Revokes every grant of an account: its refresh and access tokens stop working. */
    revokeGrant(account: string) {
      for (const family of st.familiesByAccount.get(account) ?? []) {
        family.revoked = true
        st.counters.revoked++
      }
    },
    accounts() {
      const byAccount = new Map<string, AccountGrants>()
      for (const family of st.families) {
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
      for (const { family, expiresAt } of st.accessTokens.values()) {
        if (!family.revoked && expiresAt > now) byAccount.get(family.account)!.liveAccessTokens++
      }
      return [...byAccount.values()]
    },
    isRevoked(refreshToken: string) {
      return st.refreshTokens.get(refreshToken)?.family.revoked ?? false
    },
    /** Whether a refresh token would be accepted now: known, unspent, its family not revoked. */
    isRefreshTokenValid(refreshToken: string) {
      const entry = st.refreshTokens.get(refreshToken)
      return entry !== undefined && !entry.used && !entry.family.revoked
    },
    /** Ends answers held by `failNext('hang')`. */
    releaseHanging() {
      for (const res of st.hanging.splice(0)) res.destroy()
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
