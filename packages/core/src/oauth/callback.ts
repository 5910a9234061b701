import { OAuthFlowError } from '../errors/connection.js'
import { isSchedulingError } from '../errors/errors.js'
import { OAuthError } from '../errors/transport.js'
import { notify } from '../log.js'
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
import {
  ensureWebhook,
  isConfigError,
  switchAccount,
  webhookPendingPage,
} from './account-webhook.js'
import { checkIssuer, serviceRefusal } from './callback-query.js'
import { connectionCookie } from './connection.js'
import { redirect, step } from './flow.js'
import type { OAuthRequest, OAuthResponse } from './options.js'
import type { RouteSettings } from './settings.js'
import { checkState, claimState, clearStateCookie } from './state.js'
import { storeConnection } from './store-connection.js'

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
 * verifier), identifies the account, stores the tokens as a new connection generation, then
 * redirects (same site only) with the connection cookie naming that generation.
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
  const { stored, switched, accountId, previousAccountId } = await storeNewConnection(
    request,
    key,
    { ...tokens, account },
    settings,
    traced,
  )
  const { connection } = stored
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
    () => onConnected?.({ key, account, record: stored, request: request.raw }),
  )
  const cookies = [
    clearStateCookie(settings.options.redirectUri, settings.secure),
    await connectionCookie(key, connection, settings.cookieSecrets, settings.secure),
  ]
  const target = signIn.r ?? settings.successRedirect
  if (webhookFailure === undefined) return redirect(target, cookies)
  return webhookPendingPage(request, target, cookies, isConfigError(webhookFailure))
}

/**
 * The new connection stored over the key's previous one (its generation after it). When it is
 * another service account than before, its webhook goes first while its token still works.
 */
async function storeNewConnection<Req>(
  request: OAuthRequest<Req>,
  key: string,
  tokens: Omit<TokenRecord, 'connection' | 'app'>,
  settings: RouteSettings<Req>,
  traced: Traced | undefined,
) {
  const previous = await inChildSpan('scheduling.token_store.get', traced, () =>
    step(
      'store_failed',
      () => 'The token store could not be read.',
      () => settings.store.get(key),
    ),
  )
  const made = (connection: string): TokenRecord => ({ ...tokens, connection, app: settings.app })
  const accountId = accountIdOf(tokens)
  const previousAccountId = accountIdOf(previous)
  const switched =
    previous !== undefined && previousAccountId !== undefined && previousAccountId !== accountId
  // This connection's generation, later than the one it replaces, written over the version it
  // was computed from: its cookie counts only while the record is this connection, and a
  // restored older record is refused as rolled back.
  let record: (TokenRecord & { connection: string }) | undefined
  const write = async () => {
    record = await inChildSpan('scheduling.token_store.set', traced, () =>
      step(
        'store_failed',
        () => 'The tokens could not be saved in the token store.',
        () => storeConnection(settings.store, key, previous, made),
      ),
    )
  }
  if (switched) await switchAccount(request, key, previousAccountId, write, settings)
  else await write()
  if (record === undefined)
    throw new OAuthFlowError(
      'store_failed',
      "The subscriptions' replaceConnection never ran its change: the new connection was not stored.",
    )
  return { stored: record, switched, accountId, previousAccountId }
}
