import { OAuthFlowError } from '../errors/connection.js'
import { isSchedulingError, serverText } from '../errors/errors.js'
import { OAuthError } from '../errors/transport.js'
import { consoleLogger, describeError, emit as log, notify } from '../log.js'
import {
  attributeText,
  endSpan,
  inChildSpan,
  setAttributes,
  startSpan,
  type Traced,
  within,
} from '../telemetry/otel.js'
import { accountIdOf, announceConnectionChange } from '../tokens/connection.js'
import type { AccountInfo, TokenRecord, TokenSet } from '../tokens/record.js'
import { connectionCookie, newConnectionNonce } from './connection.js'
import { privateHeaders, redirect, step } from './flow.js'
import type { OAuthRequest, OAuthResponse } from './options.js'
import { noticePage, wantsJson } from './page.js'
import type { RouteSettings } from './settings.js'
import { checkState, claimState, clearStateCookie } from './state.js'

/**
 * Text from the callback's query, which whoever crafted the link chose: only the characters
 * RFC 6749 allows in `error` and `error_description` (printable ASCII but `"` and `\`), capped.
 */
function callbackText(text: string, max: number): string {
  return serverText(text.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, ' '), max)
}

/**
 * The error the authorization server sent back to the callback, if any. `access_denied` means
 * the account owner or the server refused (RFC 6749 section 4.1.2.1): the page says what the
 * server said, never that the user declined.
 */
function serviceRefusal(url: URL): OAuthFlowError | undefined {
  const error = url.searchParams.get('error')
  if (error === null) return undefined
  const raw = url.searchParams.get('error_description')
  const description = raw === null ? '' : callbackText(raw, 200)
  const said = description === '' ? '' : ` It said: "${description}".`
  if (error === 'access_denied') {
    return new OAuthFlowError(
      'access_denied',
      `The authorization server did not grant access (access_denied).${said} Nothing was stored.`,
    )
  }
  return new OAuthFlowError(
    'authorization_failed',
    `The authorization server refused the authorization (${callbackText(error, 64) || 'no error code'}).${said} Nothing was stored.`,
  )
}

/**
 * RFC 9207: a callback that names its authorization server in `iss` must name the configured
 * one, or the code may be another server's (a mix-up attack). Without `iss`, nothing to check.
 */
function checkIssuer(url: URL, issuers: readonly string[]): void {
  const all = url.searchParams.getAll('iss')
  if (all.length === 0) return
  // A parameter sent twice is refused (RFC 6749 section 3.1): which one counts is not ours to pick.
  if (all.length === 1 && issuers.includes(all[0]!)) return
  throw new OAuthFlowError(
    'issuer_mismatch',
    'The callback came from another authorization server than the one configured (its iss does not match). Nothing was stored.',
    {
      cause: new Error(
        `iss was "${callbackText(all.join(', '), 200)}", expected ${issuers.map((one) => `"${one}"`).join(' or ')} (set the issuer option to the server's issuer identifier).`,
      ),
    },
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

/**
 * Why the exchange failed, in a word a developer can look up: the OAuth error code
 * (`invalid_client` is a setup fault, `invalid_grant` a used or expired code), else the status.
 */
function exchangeFault(cause: unknown): string {
  if (cause instanceof OAuthError)
    return ` (${cause.error ?? `HTTP ${cause.status}, no OAuth error code`})`
  return isSchedulingError(cause) ? ` (${cause.code})` : ''
}

/** Exchanges the code and identifies the account the tokens belong to. */
async function connect<Req>(
  code: string,
  codeVerifier: string | undefined,
  settings: RouteSettings<Req>,
  traced: Traced | undefined,
): Promise<{ tokens: TokenSet; account: AccountInfo }> {
  const tokens = await inChildSpan('scheduling.oauth.token_exchange', traced, () =>
    step(
      'token_exchange_failed',
      (cause) => `The authorization code could not be exchanged for tokens${exchangeFault(cause)}.`,
      () => settings.oauth.exchangeCode(code, { codeVerifier }),
    ),
  )
  const account = await inChildSpan('scheduling.oauth.identify', traced, () =>
    step(
      'identify_failed',
      () => 'The connected account could not be identified (GET /me failed).',
      () => settings.identify(tokens.accessToken),
    ),
  )
  return { tokens, account }
}

/**
 * `GET /callback`: checks the state against this browser's sign-in, then the `iss` when the
 * server sent one, and uses the state up; exchanges the code (with the sign-in's PKCE
 * verifier), identifies the account, stores the tokens with a new connection nonce, then
 * redirects (same site only) with the connection cookie naming that nonce.
 */
export async function callback<Req>(
  request: OAuthRequest<Req>,
  url: URL,
  settings: RouteSettings<Req>,
): Promise<OAuthResponse> {
  const traced = startSpan('scheduling.oauth.callback')
  if (traced === undefined) return connectAccount(request, url, settings, undefined)
  try {
    const answer = await within(traced, () => connectAccount(request, url, settings, traced))
    endSpan(traced, undefined, { 'http.response.status_code': answer.status })
    return answer
  } catch (error) {
    endSpan(traced, error)
    throw error
  }
}

/** The callback's work, in the span `callback` started when one records. */
async function connectAccount<Req>(
  request: OAuthRequest<Req>,
  url: URL,
  settings: RouteSettings<Req>,
  traced: Traced | undefined,
): Promise<OAuthResponse> {
  // The state first: a refusal's text or a foreign iss is only read from a callback that
  // belongs to this browser's sign-in, not from any link someone crafted.
  const signIn = await checkState(
    request,
    url.searchParams.get('state'),
    settings as RouteSettings<unknown>,
  )
  checkIssuer(url, settings.issuers)
  const refusal = serviceRefusal(url)
  if (refusal) throw refusal
  const code = url.searchParams.get('code')
  if (code === null || code === '')
    throw new OAuthFlowError('code_missing', 'The callback has no authorization code.')
  await claimState(signIn, settings as RouteSettings<unknown>)
  // PKCE: the code is exchanged with the verifier this browser's sign-in holds, so a code
  // leaked from another sign-in (injected into this one) is refused by the server.
  const { tokens, account } = await connect(code, signIn.v, settings, traced)
  const key = await keyFor(request, account, settings)
  setAttributes(traced, { 'scheduling.account': attributeText(key) })
  // This connection's nonce: its cookie counts only while the record is this connection.
  const connection = newConnectionNonce()
  const record: TokenRecord = { ...tokens, account, connection, app: settings.app }
  const previous = await inChildSpan('scheduling.token_store.get', traced, () =>
    step(
      'store_failed',
      () => 'The token store could not be read.',
      () => settings.store.get(key),
    ),
  )
  const accountId = accountIdOf(record)
  const previousAccountId = accountIdOf(previous)
  const switched =
    previous !== undefined && previousAccountId !== undefined && previousAccountId !== accountId
  const write = () =>
    inChildSpan('scheduling.token_store.set', traced, () =>
      step(
        'store_failed',
        () => 'The tokens could not be saved in the token store.',
        () => settings.store.set(key, record),
      ),
    )
  // Another service account than before: its webhook goes while its token still works.
  if (switched) await switchAccount(request, key, previousAccountId, write, settings)
  else await write()
  // Every token manager of this process forgets what it kept of the key, before anything runs.
  announceConnectionChange(settings.store, key)
  const webhookFailure = await ensureWebhook(request, key, settings)
  notify(
    settings.options.onConnectionChange,
    switched
      ? { type: 'reconnected', key, accountId, previousAccountId }
      : { type: 'connected', key, accountId },
  )
  const { onConnected } = settings.options
  await step(
    'connected_hook_failed',
    () => 'The tokens were stored, but the onConnected hook failed.',
    () => onConnected?.({ key, account, record, request: request.raw }),
  )
  const cookies = [
    clearStateCookie(settings.options.redirectUri, settings.secure),
    await connectionCookie(key, connection, settings.cookieSecrets, settings.secure),
  ]
  const target = signIn.r ?? settings.successRedirect
  if (webhookFailure === undefined) return redirect(target, cookies)
  return webhookPendingPage(request, target, cookies, isConfigError(webhookFailure))
}

/** A set-up mistake (`invalid_options`), by code: the error may come from another copy of the package. */
const isConfigError = (error: unknown) =>
  isSchedulingError(error) && error.code === 'invalid_options'

/**
 * Makes the connected account's webhook (option `subscriptions`). A failure does not undo the
 * connection: it is logged with its cause and returned, for the page to say so; `reconcile`
 * creates the webhook later (the subscription store holds the account already).
 */
async function ensureWebhook<Req>(
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
async function switchAccount<Req>(
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
function webhookPendingPage<Req>(
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
