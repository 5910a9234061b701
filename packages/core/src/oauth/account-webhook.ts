import { isSchedulingError } from '../errors/errors.js'
import { consoleLogger, describeError, emit as log } from '../log.js'
import { privateHeaders } from './flow.js'
import type { OAuthRequest, OAuthResponse } from './options.js'
import { noticePage, wantsJson } from './page.js'
import type { RouteSettings } from './settings.js'

// The connected account's webhook, from the callback (option `subscriptions`): made after a
// connection, the old account's deleted when the key switches accounts, and the page that says
// a webhook is still to be made.

/** A set-up mistake (`invalid_options`), by code: the error may come from another copy of the package. */
export const isConfigError = (error: unknown) =>
  isSchedulingError(error) && error.code === 'invalid_options'

/**
 * Makes the connected account's webhook (option `subscriptions`). A failure does not undo the
 * connection: it is logged with its cause and returned, for the page to say so; `reconcile`
 * creates the webhook later (the subscription store holds the account already).
 */
export async function ensureWebhook<Req>(
  request: OAuthRequest<Req>,
  key: string,
  settings: RouteSettings<Req>,
): Promise<unknown> {
  const subscriptions = settings.options.subscriptions
  if (subscriptions === undefined) return undefined
  try {
    await subscriptions.ensure(key)
    return undefined
  } catch (error) {
    log(
      settings.logger ?? request.logger ?? consoleLogger,
      'error',
      isConfigError(error)
        ? `schedulingOAuth: "${key}" is connected, but its webhook cannot be set up: a configuration error, which reconcile() cannot repair until it is fixed. ${describeError(error)}`
        : `schedulingOAuth: "${key}" is connected, but its webhook could not be set up; reconcile() sets it up later. ${describeError(error)}`,
    )
    return error
  }
}

/**
 * The key was connected to another service account: that account's webhook is deleted with its
 * token, which is still the stored one, then the new tokens are written, under the account's
 * lease when the subscriptions offer it (no other instance ensures a webhook for the old account
 * in between). A failure to delete is logged, and the connection goes on.
 */
export async function switchAccount<Req>(
  request: OAuthRequest<Req>,
  key: string,
  previousAccountId: string,
  write: () => Promise<void>,
  settings: RouteSettings<Req>,
): Promise<void> {
  const subscriptions = settings.options.subscriptions
  if (subscriptions === undefined) return await write()
  const logger = settings.logger ?? request.logger ?? consoleLogger
  const said = `schedulingOAuth: "${key}" was connected to service account ${previousAccountId} and is now connected to another;`
  let removed: { deleted: string[]; failed: string[] }
  if (typeof subscriptions.replaceConnection === 'function') {
    removed = await subscriptions.replaceConnection(key, write)
  } else {
    removed = await subscriptions.remove(key).catch((error: unknown) => {
      log(
        logger,
        'warn',
        `${said} its old webhook could not be deleted (its deliveries are answered without handlers). ${describeError(error)}`,
      )
      return { deleted: [], failed: [] }
    })
    await write()
  }
  const { deleted, failed } = removed
  log(
    logger,
    failed.length > 0 ? 'warn' : 'info',
    `${said} ${deleted.length > 0 ? `deleted its webhook(s) ${deleted.join(', ')}` : 'it had no webhook left'}${failed.length > 0 ? `; the service did not delete ${failed.join(', ')} (their deliveries are answered without handlers; the account owner can delete them in the service's settings)` : ''}.`,
  )
}

/** The page after a connection whose webhook is still to be made: connected, and says what is missing. */
export function webhookPendingPage<Req>(
  request: OAuthRequest<Req>,
  target: string,
  cookies: string[],
  misconfigured: boolean,
): OAuthResponse {
  const headers = { ...privateHeaders(), 'set-cookie': cookies }
  if (wantsJson(request.headers)) {
    return {
      status: 200,
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({
        connected: true,
        webhook: misconfigured ? 'misconfigured' : 'pending',
      }),
    }
  }
  return {
    status: 200,
    headers: { ...headers, 'content-type': 'text/html; charset=utf-8' },
    body: noticePage(
      'Connected, with one step left',
      misconfigured
        ? "Your scheduling account is connected, but this app's set-up does not let it receive changes from the account yet. The app's operator has been told what to fix; nothing is needed from you."
        : 'Your scheduling account is connected, but its webhook could not be set up yet, so changes in it may reach this app late. It is set up again automatically; nothing is needed from you.',
      target,
    ),
  }
}
