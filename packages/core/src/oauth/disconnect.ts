import { OAuthFlowError } from '../errors.js'
import { getHeader } from '../headers.js'
import { clearConnectionCookie, readConnectedKey } from './connection.js'
import { redirect, step } from './flow.js'
import type { OAuthRequest, OAuthResponse, RouteSettings } from './options.js'
import { wantsJson } from './page.js'
import { safeReturnTo } from './redirect.js'

/**
 * Whether a state-changing request shows that it comes from this app: an Origin that is the
 * app's own (scheme, host and port) or an allowed one, or without Origin,
 * `Sec-Fetch-Site: same-origin`.
 */
function fromThisSite(request: OAuthRequest<unknown>, origins: ReadonlySet<string>): boolean {
  const origin = getHeader(request.headers, 'origin')
  return origin !== undefined
    ? origins.has(origin)
    : getHeader(request.headers, 'sec-fetch-site') === 'same-origin'
}

/** `POST /disconnect`: deletes the tokens of the account this browser connected. */
export async function disconnect<Req>(
  request: OAuthRequest<Req>,
  url: URL,
  settings: RouteSettings<Req>,
): Promise<OAuthResponse> {
  if (!fromThisSite(request, settings.origins)) {
    throw new OAuthFlowError(
      'cross_origin',
      'Disconnecting is only allowed from this site: the request must carry an Origin header with the origin of redirectUri (or one of allowedOrigins).',
    )
  }
  const { disconnectKey, onDisconnected } = settings.options
  const key = disconnectKey
    ? await step(
        'disconnect_key_failed',
        () => 'The disconnectKey option failed.',
        () => disconnectKey(request.raw),
      )
    : await readConnectedKey(request.headers, settings.cookieSecret)
  if (key === undefined || key === '') {
    throw new OAuthFlowError(
      'nothing_to_disconnect',
      'There is no connected account to disconnect.',
    )
  }
  await step(
    'store_failed',
    () => 'The tokens could not be deleted from the token store.',
    () => settings.store.delete(key),
  )
  await step(
    'disconnected_hook_failed',
    () => 'The tokens were deleted, but the onDisconnected hook failed.',
    () => onDisconnected?.({ key, request: request.raw }),
  )
  const clear = clearConnectionCookie(settings.secure)
  if (wantsJson(request.headers)) {
    return {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'set-cookie': [clear] },
      body: JSON.stringify({ disconnected: true }),
    }
  }
  const returnTo = safeReturnTo(url.searchParams.get('returnTo'))
  return redirect(returnTo ?? settings.successRedirect, [clear], 303)
}
