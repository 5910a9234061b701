import { ConfigError } from '../errors/errors.js'

/**
 * For an adapter whose routes start before any request can carry a warning (Fastify registers
 * them at boot, across processes): a `cookieSecret` must be given, one secret or a list newest
 * first, never left to a random one per process.
 */
export function requireCookieSecret(cookieSecret: unknown): void {
  const list = typeof cookieSecret === 'string' ? [cookieSecret] : cookieSecret
  if (
    Array.isArray(list) &&
    list.length > 0 &&
    list.every((s) => typeof s === 'string' && s !== '')
  ) {
    return
  }
  throw new ConfigError(
    'schedulingOAuth: cookieSecret is required: 32+ random characters, the same in every ' +
      'process (it signs the sign-in and connection cookies), e.g. process.env.COOKIE_SECRET.',
  )
}
