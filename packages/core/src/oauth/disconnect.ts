import { OAuthFlowError } from '../errors/connection.js'
import { getHeader } from '../http/headers.js'
import { consoleLogger, describeError, emit as log, notify } from '../log.js'
import { accountIdOf, announceConnectionChange } from '../tokens/connection.js'
import type { TokenRecord } from '../tokens/record.js'
import { clearConnectionCookie, readConnection } from './connection.js'
import { privateHeaders, redirect, step } from './flow.js'
import type { OAuthRequest, OAuthResponse } from './options.js'
import { wantsJson } from './page.js'
import { safeReturnTo } from './redirect.js'
import type { RouteSettings } from './settings.js'

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
  // The connection the request names: with the cookie, the one it was made for (an older
  // cookie, from before a disconnect and reconnection, names none); else the stored one.
  const named = disconnectKey
    ? await step(
        'disconnect_key_failed',
        () => 'The disconnectKey option failed.',
        () => disconnectKey(request.raw),
      ).then((key) => (key === undefined || key === '' ? undefined : { k: key, n: undefined }))
    : await step(
        'store_failed',
        () => 'The connection could not be checked against the token store.',
        () =>
          readConnection(request.headers, settings.cookieSecrets, {
            secure: settings.secure,
            tokenStore: settings.store,
          }),
      )
  if (named === undefined) {
    throw new OAuthFlowError(
      'nothing_to_disconnect',
      'There is no connected account to disconnect.',
    )
  }
  const key = named.k
  const record = await read(key, settings)
  const outcome = await removeWebhook(request, key, settings, () =>
    deleteConnection(key, named.n ?? record?.connection, settings),
  )
  announceConnectionChange(settings.store, key)
  if (outcome === 'replaced') {
    await keepNewerConnection(request, key, settings)
  } else {
    notify(settings.options.onConnectionChange, {
      type: 'disconnected',
      key,
      accountId: accountIdOf(record),
    })
    await step(
      'disconnected_hook_failed',
      () => 'The tokens were deleted, but the onDisconnected hook failed.',
      () => onDisconnected?.({ key, request: request.raw }),
    )
  }
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
 * Deletes the account's webhook (option `subscriptions`) while its token still works, then
 * runs `then` (the tokens deleted), under the account's lease when the subscriptions offer it.
 * The subscription store failing refuses the disconnect (nothing changed, the user can try
 * again); the service failing to delete is logged, and the disconnect goes on.
 */
async function removeWebhook<Req, T>(
  request: OAuthRequest<Req>,
  key: string,
  settings: RouteSettings<Req>,
  then: () => Promise<T>,
): Promise<T> {
  const subscriptions = settings.options.subscriptions
  if (subscriptions === undefined) return await then()
  let result: T | undefined
  const removed = await step(
    'store_failed',
    () =>
      "The account's webhook could not be removed (the subscription store failed); nothing was disconnected.",
    async () => {
      if (typeof subscriptions.replaceConnection === 'function') {
        const done = await subscriptions.replaceConnection(key, then)
        result = done.result
        return done
      }
      return await subscriptions.remove(key)
    },
  )
  if (removed.failed.length > 0) {
    log(
      settings.logger ?? request.logger ?? consoleLogger,
      'warn',
      `schedulingOAuth: "${key}" is disconnected, but the service did not delete its webhook(s) ${removed.failed.join(', ')}. Their late deliveries are answered without handlers for the grace period, then refused; the account owner can delete them in the service's settings.`,
    )
  }
  return typeof subscriptions.replaceConnection === 'function' ? (result as T) : await then()
}

const read = <Req>(key: string, settings: RouteSettings<Req>): Promise<TokenRecord | undefined> =>
  step(
    'store_failed',
    () => 'The connection could not be read from the token store.',
    () => settings.store.get(key),
  )

/**
 * Deletes the key's tokens if they are still the connection `connection` (any, when
 * `undefined`): by compare-and-delete when the store offers it, so that a connection made
 * meanwhile (another browser connecting the key again) is never deleted. A refresh meanwhile
 * changes the version, not the connection: read again and tried again.
 */
async function deleteConnection<Req>(
  key: string,
  connection: string | undefined,
  settings: RouteSettings<Req>,
): Promise<'deleted' | 'replaced'> {
  const { store } = settings
  if (typeof store.compareAndDelete !== 'function') {
    await step(
      'store_failed',
      () => 'The tokens could not be deleted from the token store.',
      () => store.delete(key),
    )
    return 'deleted'
  }
  for (let tries = 0; tries < 10; tries++) {
    const current = await read(key, settings)
    if (current === undefined) return 'deleted'
    if (connection !== undefined && current.connection !== connection) return 'replaced'
    const deleted = await step(
      'store_failed',
      () => 'The tokens could not be deleted from the token store.',
      () => store.compareAndDelete!(key, current.version ?? 0),
    )
    if (deleted) return 'deleted'
  }
  throw new OAuthFlowError(
    'store_failed',
    'The tokens could not be deleted from the token store: they kept changing (tried 10 times).',
  )
}

/**
 * The key was connected again (another browser) while this disconnect ran: that newer
 * connection stays, and its webhook, which the disconnect may have removed a moment before,
 * is made sure of again.
 */
async function keepNewerConnection<Req>(
  request: OAuthRequest<Req>,
  key: string,
  settings: RouteSettings<Req>,
): Promise<void> {
  const logger = settings.logger ?? request.logger ?? consoleLogger
  log(
    logger,
    'info',
    `schedulingOAuth: "${key}" was connected again (another sign-in) while this disconnect ran: the newer connection stays.`,
  )
  try {
    await settings.options.subscriptions?.ensure(key)
  } catch (error) {
    log(
      logger,
      'error',
      `schedulingOAuth: the webhook of "${key}"'s newer connection could not be made sure of; reconcile() sets it up later. ${describeError(error)}`,
    )
  }
}
