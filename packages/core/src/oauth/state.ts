import { runOnce } from '../claims/run-once.js'
import { OAuthFlowError } from '../errors/connection.js'
import { redirectMount } from '../kit/mount.js'
import { randomToken, sha256Base64Url, timingSafeEqual, toBytes } from '../platform/bytes.js'
import {
  cookieName,
  parseCookies,
  readSignedCookie,
  serializeCookie,
  signCookie,
  singleCookie,
} from './cookies.js'
import type { OAuthRequest } from './options.js'
import type { RouteSettings } from './settings.js'

/**
 * The signed, short-lived cookie that ties a callback to the sign-in this browser started
 * (`__Host-scheduling_oauth_state` over HTTPS).
 */
export const STATE_COOKIE = 'scheduling_oauth_state'

/** What the state cookie holds: the state, the safe `returnTo`, the expiry, the PKCE verifier. */
export interface SignInState {
  s: string
  r?: string
  e: number
  /** The PKCE code verifier (RFC 7636), unless PKCE is turned off. */
  v?: string
}

function isSignInState(value: unknown): value is SignInState {
  const v = value as SignInState
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.s === 'string' &&
    typeof v.e === 'number' &&
    (v.v === undefined || typeof v.v === 'string')
  )
}

function sameString(a: string, b: string): boolean {
  return timingSafeEqual(toBytes(a), toBytes(b))
}

/**
 * Where the state cookie lives: over plain HTTP under the routes' mount as the redirect URI
 * spells it (the path the browser sends the callback to; not the sign-in request's spelling,
 * which a case-insensitive router or a path-rewriting proxy may change), and at `/` over
 * HTTPS, as the `__Host-` prefix requires.
 */
function statePath(redirectUri: string, secure: boolean): string {
  return secure ? '/' : redirectMount(redirectUri) || '/'
}

/** A new sign-in: its random state, its PKCE challenge, and the cookie that remembers them. */
export async function startSignIn(
  returnTo: string | undefined,
  settings: RouteSettings<unknown>,
): Promise<{ state: string; codeChallenge: string | undefined; cookie: string }> {
  const state = randomToken(32)
  const value: SignInState = { s: state, e: Date.now() + settings.stateTtl }
  if (returnTo !== undefined) value.r = returnTo
  let codeChallenge: string | undefined
  if (settings.pkce) {
    // RFC 7636: 32 random bytes give a 43-character verifier; the challenge is its SHA-256.
    value.v = randomToken(32)
    codeChallenge = await sha256Base64Url(value.v)
  }
  const name = cookieName(STATE_COOKIE, settings.secure)
  const signed = await signCookie(name, value, settings.cookieSecrets)
  const cookie = serializeCookie(name, signed, {
    path: statePath(settings.options.redirectUri, settings.secure),
    maxAgeSeconds: Math.ceil(settings.stateTtl / 1000),
    secure: settings.secure,
  })
  return { state, codeChallenge, cookie }
}

/** The cookie that ends the sign-in, whatever its outcome. */
export function clearStateCookie(redirectUri: string, secure: boolean): string {
  return serializeCookie(cookieName(STATE_COOKIE, secure), '', {
    path: statePath(redirectUri, secure),
    maxAgeSeconds: 0,
    secure,
  })
}

/**
 * The sign-in this callback belongs to: the state cookie is signed by this app, sent once,
 * unexpired, and holds the callback's `state` (compared in constant time). Over HTTPS only the
 * `__Host-` cookie counts, which no sibling host can plant. Throws `state_missing`,
 * `state_invalid` (a second cookie of the name included) or `state_mismatch`.
 */
export async function checkState(
  request: OAuthRequest<unknown>,
  state: string | null,
  settings: RouteSettings<unknown>,
): Promise<SignInState> {
  const name = cookieName(STATE_COOKIE, settings.secure)
  const cookies = parseCookies(request.headers)
  const sent = singleCookie(cookies, name)
  if (sent === null) {
    throw new OAuthFlowError(
      'state_invalid',
      'The sign-in cookie was sent more than once (another site on this domain may have set one): start again from the login link.',
    )
  }
  const value = await readSignedCookie(name, sent, settings.cookieSecrets)
  if (!isSignInState(value)) {
    throw new OAuthFlowError(
      sent === undefined ? 'state_missing' : 'state_invalid',
      'The sign-in cookie is missing, expired or was not set by this app: start again from the login link.',
    )
  }
  if (value.e < Date.now()) {
    throw new OAuthFlowError(
      'state_invalid',
      'The sign-in took too long and expired: start again from the login link.',
    )
  }
  if (state === null || !sameString(state, value.s)) {
    throw new OAuthFlowError(
      'state_mismatch',
      'The state of this callback does not match the sign-in this browser started: nothing was stored.',
    )
  }
  if (settings.pkce && value.v === undefined) {
    throw new OAuthFlowError(
      'state_invalid',
      'The sign-in cookie holds no PKCE verifier (it was made with PKCE off): start again from the login link.',
    )
  }
  return value
}

/** Uses the sign-in up: one sign-in, one callback. Throws `state_used` for a replay. */
export async function claimState(
  signIn: SignInState,
  settings: RouteSettings<unknown>,
): Promise<void> {
  const key = `oauth-state:${signIn.s}`
  let used: boolean
  try {
    // The work is the claim itself: a state is spent the moment it is claimed.
    used = !(await runOnce({ store: settings.states, key }, () => {})).ran
  } catch (cause) {
    throw new OAuthFlowError(
      'state_store_failed',
      'The sign-in could not be checked against the state store (stateStore): start again from the login link.',
      { cause },
    )
  }
  if (used) {
    throw new OAuthFlowError(
      'state_used',
      'This sign-in was already completed or is being completed: start again from the login link.',
    )
  }
}
