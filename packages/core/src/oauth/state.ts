import { randomToken, timingSafeEqual, toBytes } from '../bytes.js'
import { OAuthFlowError } from '../errors.js'
import { newClaimOwner } from '../webhooks/dedupe.js'
import { parseCookies, readSignedCookie, serializeCookie, signCookie } from './cookies.js'
import type { OAuthRequest, RouteSettings } from './options.js'

/** The signed, short-lived cookie that ties a callback to the sign-in this browser started. */
export const STATE_COOKIE = 'scheduling_oauth_state'

/** What the state cookie holds: the state, the safe `returnTo`, the expiry. */
export interface SignInState {
  s: string
  r?: string
  e: number
}

function isSignInState(value: unknown): value is SignInState {
  const v = value as SignInState
  return typeof v === 'object' && v !== null && typeof v.s === 'string' && typeof v.e === 'number'
}

function sameString(a: string, b: string): boolean {
  return timingSafeEqual(toBytes(a), toBytes(b))
}

/** A new sign-in: its random state, and the cookie that remembers it (and `returnTo`). */
export async function startSignIn(
  request: OAuthRequest<unknown>,
  returnTo: string | undefined,
  settings: RouteSettings<unknown>,
): Promise<{ state: string; cookie: string }> {
  const state = randomToken(32)
  const value: SignInState = { s: state, e: Date.now() + settings.stateTtl }
  if (returnTo !== undefined) value.r = returnTo
  const signed = await signCookie(STATE_COOKIE, value, settings.cookieSecret)
  const cookie = serializeCookie(STATE_COOKIE, signed, {
    path: request.mountPath || '/',
    maxAgeSeconds: Math.ceil(settings.stateTtl / 1000),
    secure: settings.secure,
  })
  return { state, cookie }
}

/** The cookie that ends the sign-in, whatever its outcome. */
export function clearStateCookie(request: OAuthRequest<unknown>, secure: boolean): string {
  return serializeCookie(STATE_COOKIE, '', {
    path: request.mountPath || '/',
    maxAgeSeconds: 0,
    secure,
  })
}

/**
 * The sign-in this callback belongs to: the state cookie is signed by this app, unexpired,
 * and holds the callback's `state` (compared in constant time). Throws `state_missing`,
 * `state_invalid` or `state_mismatch`.
 */
export async function checkState(
  request: OAuthRequest<unknown>,
  state: string | null,
  cookieSecret: string,
): Promise<SignInState> {
  const cookies = parseCookies(request.headers)
  const value = await readSignedCookie(STATE_COOKIE, cookies.get(STATE_COOKIE), cookieSecret)
  if (!isSignInState(value)) {
    throw new OAuthFlowError(
      cookies.has(STATE_COOKIE) ? 'state_invalid' : 'state_missing',
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
  return value
}

/** Uses the sign-in up: one sign-in, one callback. Throws `state_used` for a replay. */
export async function claimState(
  signIn: SignInState,
  settings: RouteSettings<unknown>,
): Promise<void> {
  const key = `oauth-state:${signIn.s}`
  let claimed: string
  try {
    const owner = newClaimOwner()
    claimed = await settings.states.claim(key, owner)
    if (claimed === 'claimed') await settings.states.complete(key, owner)
  } catch (cause) {
    throw new OAuthFlowError(
      'state_store_failed',
      'The sign-in could not be checked against the state store (stateStore): start again from the login link.',
      { cause },
    )
  }
  if (claimed !== 'claimed') {
    throw new OAuthFlowError(
      'state_used',
      'This sign-in was already completed or is being completed: start again from the login link.',
    )
  }
}
