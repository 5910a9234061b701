import { createSchedulingClient } from '../api/client.js'
import { type DedupeStore, MemoryDedupeStore } from '../claims/dedupe.js'
import { ConfigError } from '../errors/errors.js'
import { withoutTrailingSlashes } from '../http/paths.js'
import { checkLogger, consoleLogger, developmentMode, type Logger } from '../log.js'
import { randomToken } from '../platform/bytes.js'
import type { AccountInfo, ConnectionApp } from '../tokens/record.js'
import type { TokenStore } from '../tokens/store.js'
import { createOAuthClient, type OAuthClient } from './client.js'
import type { OAuthRoutesOptions } from './options.js'

// The OAuth routes' options, checked and resolved once: cookie secrets, allowed origins,
// issuers, the app a connection is made for, the stores.

/** The options checked, with every default applied, as the routes use them. */
export interface RouteSettings<Req> {
  options: OAuthRoutesOptions<Req>
  oauth: OAuthClient
  store: TokenStore
  /** The cookie secrets, newest first (at least one). */
  cookieSecrets: readonly string[]
  stateTtl: number
  states: DedupeStore
  /** PKCE on every sign-in (option `pkce`). */
  pkce: boolean
  secure: boolean
  /** Origins allowed to disconnect: the redirect URI's, and `allowedOrigins`. */
  origins: ReadonlySet<string>
  successRedirect: string
  identify: (accessToken: string) => Promise<AccountInfo>
  /** What each connection is made for, kept in its record. */
  app: ConnectionApp
  /** The `iss` values a callback may carry: the `issuer` option, or `authUrl` with and without `/`. */
  issuers: readonly string[]
  /** The `logger` option; `undefined` lets the adapter's or the console's apply. */
  logger: Logger | undefined
  showCauses: boolean
}

/**
 * The state store when none is given: in this process's memory, each used state kept for the
 * sign-in's whole lifetime. Full of unexpired states, it refuses new ones (the callback answers
 * `state_store_failed`) rather than forgetting a used one, which would make it usable again.
 */
export function defaultStateStore(stateTtl: number): MemoryDedupeStore {
  return new MemoryDedupeStore({ ttlMs: stateTtl, leaseMs: stateTtl, whenFull: 'refuse' })
}

let warnedAboutSecret = false

function cookieSecretsOf(
  options: OAuthRoutesOptions<never>,
  logger: Logger | undefined,
): readonly string[] {
  const given = options.cookieSecret
  const list = typeof given === 'string' ? [given] : given
  if (
    list !== undefined &&
    (!Array.isArray(list) || list.some((secret) => typeof secret !== 'string'))
  ) {
    throw new ConfigError(
      `schedulingOAuth: cookieSecret must be a string (32+ random characters) or a list of them, newest first; got ${Array.isArray(list) ? 'a list with something else in it' : typeof given}.`,
    )
  }
  if (list === undefined || list.length === 0 || (list.length === 1 && list[0] === '')) {
    if (!warnedAboutSecret) {
      warnedAboutSecret = true
      ;(logger ?? consoleLogger).warn(
        'schedulingOAuth: no cookieSecret was given, so a random one is used by this process. ' +
          'Sign-ins in progress fail after a restart or on another process: set cookieSecret ' +
          '(32+ random characters) in production.',
      )
    }
    return [randomToken(32)]
  }
  list.forEach((secret: string, i: number) => {
    if (secret.length < 16) {
      throw new ConfigError(
        `schedulingOAuth: cookieSecret${list.length > 1 ? ` ${i + 1} of ${list.length}` : ''} must be at least 16 characters (32+ random ones are best).`,
      )
    }
  })
  return [...list]
}

function originsOf(redirectUri: string, allowed: readonly string[] = []): Set<string> {
  const origins = new Set([new URL(redirectUri).origin])
  for (const origin of allowed) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) {
      throw new ConfigError(
        `schedulingOAuth: allowedOrigins must hold origins such as "https://app.example.com", got "${String(origin).slice(0, 100)}".`,
      )
    }
    origins.add(origin)
  }
  return origins
}

function issuersOf(options: OAuthRoutesOptions<never>): string[] {
  const { issuer } = options
  if (issuer !== undefined) {
    if (typeof issuer !== 'string' || !URL.canParse(issuer)) {
      throw new ConfigError(
        'schedulingOAuth: issuer must be the authorization server\'s issuer identifier, an absolute URL such as "https://auth.example.com".',
      )
    }
    return [issuer]
  }
  const base = withoutTrailingSlashes(options.authUrl)
  return [base, `${base}/`]
}

/** The addresses a connection made by these routes is for. */
function appOf(options: OAuthRoutesOptions<never>): ConnectionApp {
  const app: ConnectionApp = {
    tokenUrl: `${withoutTrailingSlashes(options.authUrl)}/oauth/token`,
  }
  const apiUrl = options.subscriptions?.apiUrl ?? options.apiUrl
  if (typeof apiUrl === 'string') app.apiUrl = withoutTrailingSlashes(apiUrl)
  const webhookUrl = options.subscriptions?.url
  if (typeof webhookUrl === 'string') app.webhookUrl = webhookUrl
  return app
}

function checkStores(store: TokenStore, states: DedupeStore): void {
  if (
    typeof store?.get !== 'function' ||
    typeof store.set !== 'function' ||
    typeof store.delete !== 'function'
  ) {
    throw new ConfigError('schedulingOAuth: tokenStore must implement get, set and delete.')
  }
  if (typeof states.claim !== 'function' || typeof states.complete !== 'function') {
    throw new ConfigError('schedulingOAuth: stateStore must implement claim, complete and release.')
  }
}

/** Checks the options (throwing `ConfigError` with the fix) and applies the defaults. */
export function resolveRouteSettings<Req>(options: OAuthRoutesOptions<Req>): RouteSettings<Req> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError(
      'schedulingOAuth: pass the options ({ clientId, clientSecret, redirectUri, authUrl, tokenStore, cookieSecret }).',
    )
  }
  const logger = checkLogger(options.logger, 'schedulingOAuth')
  const oauth = createOAuthClient(options)
  const stateTtl = options.stateTtlMs ?? 10 * 60 * 1000
  const states = options.stateStore ?? defaultStateStore(stateTtl)
  if (options.pkce !== undefined && typeof options.pkce !== 'boolean') {
    throw new ConfigError('schedulingOAuth: pkce must be true or false.')
  }
  checkStores(options.tokenStore, states)
  const subscriptions = options.subscriptions
  if (
    subscriptions !== undefined &&
    (typeof subscriptions?.ensure !== 'function' || typeof subscriptions.remove !== 'function')
  ) {
    throw new ConfigError(
      'schedulingOAuth: subscriptions must be what createWebhookSubscriptions returns.',
    )
  }
  const cookieSecrets = cookieSecretsOf(options as OAuthRoutesOptions<never>, logger)
  const origins = originsOf(options.redirectUri, options.allowedOrigins)
  const identify =
    options.identify ??
    ((accessToken: string) =>
      createSchedulingClient({
        baseUrl: options.apiUrl ?? options.authUrl,
        token: accessToken,
        fetch: options.fetch,
        timeoutMs: options.timeoutMs,
      }).me<AccountInfo>())
  return {
    options,
    oauth,
    store: options.tokenStore,
    cookieSecrets,
    stateTtl,
    states,
    pkce: options.pkce ?? true,
    secure: options.secureCookies ?? new URL(options.redirectUri).protocol === 'https:',
    origins,
    successRedirect: options.successRedirect ?? '/',
    identify,
    app: appOf(options as OAuthRoutesOptions<never>),
    issuers: issuersOf(options as OAuthRoutesOptions<never>),
    logger,
    showCauses: options.showCauses ?? developmentMode(),
  }
}
