import { isSchedulingError, OAuthFlowError, serverText } from '../errors.js'
import type { AccountInfo, TokenRecord, TokenSet } from '../tokens/record.js'
import { connectionCookie } from './connection.js'
import { redirect, step } from './flow.js'
import type { OAuthRequest, OAuthResponse, RouteSettings } from './options.js'
import { checkState, claimState, clearStateCookie } from './state.js'

/** The error the authorization server sent back to the callback, if any. */
function serviceRefusal(url: URL): OAuthFlowError | undefined {
  const error = url.searchParams.get('error')
  if (error === null) return undefined
  if (error === 'access_denied') {
    return new OAuthFlowError(
      'access_denied',
      'The connection was declined on the consent page. Nothing was stored.',
    )
  }
  const description = url.searchParams.get('error_description')
  return new OAuthFlowError(
    'authorization_failed',
    `The service refused the authorization (${serverText(error, 64)}${description ? `: ${serverText(description)}` : ''}). Nothing was stored.`,
  )
}

/** The store key of the account just connected: the `key` option, else the account's id. */
async function keyFor<Req>(
  request: OAuthRequest<Req>,
  account: AccountInfo,
  settings: RouteSettings<Req>,
): Promise<string> {
  const custom = settings.options.key
  const id = account?.id
  const key = custom
    ? await step(
        'key_failed',
        () => 'The key option failed for the connected account.',
        () => custom(request.raw, account),
      )
    : typeof id === 'string' || typeof id === 'number'
      ? String(id)
      : undefined
  if (typeof key !== 'string' || key === '') {
    throw new OAuthFlowError(
      custom ? 'key_failed' : 'identify_failed',
      custom
        ? 'The key option gave no key (a non-empty string) for the connected account.'
        : 'GET /me gave no account id: pass a key(request, account) option.',
    )
  }
  return key
}

/** Exchanges the code and identifies the account the tokens belong to. */
async function connect<Req>(
  code: string,
  settings: RouteSettings<Req>,
): Promise<{ tokens: TokenSet; account: AccountInfo }> {
  const tokens = await step(
    'token_exchange_failed',
    (cause) =>
      `The authorization code could not be exchanged for tokens${isSchedulingError(cause) ? ` (${(cause as { error?: string }).error ?? cause.code})` : ''}.`,
    () => settings.oauth.exchangeCode(code),
  )
  const account = await step(
    'identify_failed',
    () => 'The connected account could not be identified (GET /me failed).',
    () => settings.identify(tokens.accessToken),
  )
  return { tokens, account }
}

/**
 * `GET /callback`: checks the state against this browser's sign-in and uses it up, exchanges
 * the code, identifies the account, stores the tokens, then redirects (same site only) with
 * the connection cookie.
 */
export async function callback<Req>(
  request: OAuthRequest<Req>,
  url: URL,
  settings: RouteSettings<Req>,
): Promise<OAuthResponse> {
  const refusal = serviceRefusal(url)
  if (refusal) throw refusal
  const signIn = await checkState(request, url.searchParams.get('state'), settings.cookieSecret)
  const code = url.searchParams.get('code')
  if (code === null || code === '')
    throw new OAuthFlowError('code_missing', 'The callback has no authorization code.')
  await claimState(signIn, settings as RouteSettings<unknown>)
  const { tokens, account } = await connect(code, settings)
  const key = await keyFor(request, account, settings)
  const record: TokenRecord = { ...tokens, account }
  await step(
    'store_failed',
    () => 'The tokens could not be saved in the token store.',
    () => settings.store.set(key, record),
  )
  const { onConnected } = settings.options
  await step(
    'connected_hook_failed',
    () => 'The tokens were stored, but the onConnected hook failed.',
    () => onConnected?.({ key, account, record, request: request.raw }),
  )
  return redirect(signIn.r ?? settings.successRedirect, [
    clearStateCookie(request, settings.secure),
    await connectionCookie(key, settings.cookieSecret, settings.secure),
  ])
}
