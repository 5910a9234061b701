import { appEventLogger, normalMount, underMount } from '@scheduling-kit/core/adapter'
import type { OAuthRoutes, OAuthRoutesOptions } from '@scheduling-kit/core/oauth'
import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import type { Context, Middleware } from 'koa'
import { reply } from './log.js'

export interface SchedulingOAuthOptions extends OAuthRoutesOptions<Context> {
  /** Where the routes live. Default `/auth/scheduling`. */
  prefix?: string
}

export interface SchedulingOAuthMiddleware extends Middleware {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(ctx: Context): Promise<string | undefined>
  readonly routes: OAuthRoutes<Context>
}

/**
 * `app.use(schedulingOAuth({ prefix: '/auth/scheduling', ... }))`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix.
 *
 * @example
 * ```ts
 * app.use(schedulingOAuth({
 *   prefix: '/auth/scheduling', clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * }))
 * ```
 */
export function schedulingOAuth(options: SchedulingOAuthOptions): SchedulingOAuthMiddleware {
  const routes = createOAuthRoutes<Context>(options)
  const prefix = normalMount(options.prefix ?? '/auth/scheduling')
  const middleware = (async (ctx, next) => {
    const path = underMount(ctx.url, prefix)
    const answer =
      path === undefined
        ? undefined
        : await routes.handle({
            method: ctx.method,
            path,
            headers: ctx.headers,
            mountPath: prefix,
            raw: ctx,
            secure: ctx.secure,
            logger: appEventLogger(ctx.app),
          })
    await reply(ctx, next, answer)
  }) as Middleware
  return Object.assign(middleware, {
    routes,
    connectedKey: (ctx: Context) => routes.connectedKey(ctx.headers),
  }) as SchedulingOAuthMiddleware
}
