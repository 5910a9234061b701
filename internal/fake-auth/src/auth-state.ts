import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import type {
  AuthFailure,
  AuthorizeMode,
  AuthServiceOptions,
  TokenRequest,
} from '@scheduling-kit/fake-auth/types'
import { WebhookRegistry } from './webhooks.js'

// The authorization server's state (clients, codes, token families, counters, injected
// latency and failures) and the tokens it issues.

/** One grant: the tokens issued from one code and their refreshes. Revoked as a whole. */
export interface Family {
  account: string
  revoked: boolean
  /** The access tokens issued in it: an account's are found through its families. */
  accessTokens: string[]
}

/** Everything one fake authorization server keeps. */
export function createAuthState(options: AuthServiceOptions) {
  const st = {
    options,
    clientId: options.clientId ?? 'client-123',
    clientSecret: options.clientSecret ?? 'client-secret-xyz',
    redirectUris: new Set(options.redirectUris ?? ['http://127.0.0.1:9/callback']),
    codes: new Map<
      string,
      {
        account: string
        redirectUri: string
        used: boolean
        challenge: string | undefined
        /** The grant issued from it: revoked when the code is presented again (RFC 6749 4.1.2). */
        family?: Family
      }
    >(),
    requirePkce: options.requirePkce !== false,
    refreshTokens: new Map<string, { family: Family; used: boolean; spentAt?: number }>(),
    accessTokens: new Map<string, { family: Family; expiresAt: number }>(),
    personalTokens: new Map<string, string>(),
    families: [] as Family[],
    /** Each account's grants: revoking or expiring an account's costs what it holds. */
    familiesByAccount: new Map<string, Family[]>(),
    counters: {
      authorize: 0,
      exchange: 0,
      refresh: 0,
      refreshOk: 0,
      reuse: 0,
      graceReuse: 0,
      revoked: 0,
      me: 0,
      pkceRefused: 0,
      codeReuse: 0,
    },
    tokenRequests: [] as TokenRequest[],
    failures: [] as AuthFailure[],
    down: undefined as AuthFailure | undefined,
    hanging: [] as ServerResponse[],
    authorizeMode: options.authorize ?? ('approve' as AuthorizeMode),
    nextAccount: 'acct_1',
    latencyMs: 0,
    latencyOn: 'every' as 'every' | 'success',
    expiresIn: options.expiresIn ?? 7200,
    webhooks: undefined as unknown as WebhookRegistry,
  }
  st.webhooks = new WebhookRegistry((authorization) => accountOf(st, authorization))
  return st
}

export type AuthState = ReturnType<typeof createAuthState>

/** A fresh random token, with a prefix that says what it is. */
export const token = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

export function issue(st: AuthState, family: Family, omitRefresh = false) {
  const accessToken = token('at')
  const refreshToken = token('rt')
  st.accessTokens.set(accessToken, { family, expiresAt: Date.now() + st.expiresIn * 1000 })
  family.accessTokens.push(accessToken)
  st.refreshTokens.set(refreshToken, { family, used: false })
  return {
    access_token: accessToken,
    ...(omitRefresh ? {} : { refresh_token: refreshToken }),
    expires_in: st.expiresIn,
    token_type: 'bearer',
    _refresh: refreshToken,
  }
}

export function newFamily(st: AuthState, account: string): Family {
  const family: Family = { account, revoked: false, accessTokens: [] }
  st.families.push(family)
  const mine = st.familiesByAccount.get(account)
  if (mine === undefined) st.familiesByAccount.set(account, [family])
  else mine.push(family)
  return family
}

/** The account a bearer token belongs to, if it is valid now. */
export function accountOf(st: AuthState, authorization: string | undefined): string | undefined {
  const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7) : undefined
  if (bearer === undefined) return undefined
  const personal = st.personalTokens.get(bearer)
  if (personal !== undefined) return personal
  const entry = st.accessTokens.get(bearer)
  return entry && !entry.family.revoked && entry.expiresAt > Date.now()
    ? entry.family.account
    : undefined
}
