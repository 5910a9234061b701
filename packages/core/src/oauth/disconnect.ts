import { OAuthFlowError } from '../errors.js'
import { getHeader } from '../headers.js'
import { consoleLogger, emit } from '../log.js'
import { clearConnectionCookie, readConnection } from './connection.js'
import { privateHeaders, redirect, step } from './flow.js'
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
    : // The cookie must name the stored connection: an older cookie (from before a disconnect
      // and reconnection) must not disconnect the later connection.
      await step(
        'store_failed',
        () => 'The connection could not be checked against the token store.',
        async () =>
          (
            await readConnection(request.headers, settings.cookieSecrets, {
              secure: settings.secure,
              tokenStore: settings.store,
            })
          )?.k,
      )
  if (key === undefined || key === '') {
    throw new OAuthFlowError(
      'nothing_to_disconnect',
      'There is no connected account to disconnect.',
    )
  }
  await removeWebhook(request, key, settings)
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
      headers: {
        ...privateHeaders(),
        'content-type': 'application/json; charset=utf-8',
        'set-cookie': [clear],
      },
      body: JSON.stringify({ disconnected: true }),
    }
  }
  const returnTo = safeReturnTo(url.searchParams.get('returnTo'))
  return redirect(returnTo ?? settings.successRedirect, [clear], 303)
}

/**
 * Deletes the account's webhook (option `subscriptions`) while its token still works, before
 * the tokens go. The subscription store failing refuses the disconnect (nothing changed, the
 * user can try again); the service failing to delete is logged, and the disconnect goes on.
 */
async function removeWebhook<Req>(
  request: OAuthRequest<Req>,
  key: string,
  settings: RouteSettings<Req>,
): Promise<void> {
  const subscriptions = settings.options.subscriptions
  if (subscriptions === undefined) return
  const result = await step(
    'store_failed',
    () =>
      "The account's webhook could not be removed (the subscription store failed); nothing was disconnected.",
    () => subscriptions.remove(key),
  )
  if (result.failed.length > 0) {
    emit(
      settings.logger ?? request.logger ?? consoleLogger,
      'warn',
      `schedulingOAuth: "${key}" is disconnected, but the service did not delete its webhook(s) ${result.failed.join(', ')}. Their late deliveries are answered without handlers for the grace period, then refused; the account owner can delete them in the service's settings.`,
    )
  }
}
