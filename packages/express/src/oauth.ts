import { writeNode } from '@scheduling-kit/core/adapter'
import type { OAuthRoutes, OAuthRoutesOptions } from '@scheduling-kit/core/oauth'
import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import type { Request } from 'express'
import type { Middleware } from './webhooks.js'

export interface SchedulingOAuthMiddleware extends Middleware {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(req: Request): Promise<string | undefined>
  readonly routes: OAuthRoutes<Request>
}

/**
 * `app.use('/auth/scheduling', schedulingOAuth(options))`: `GET /login`, `GET /callback` and
 * `POST /disconnect` under the mount path.
 *
 * @example
 * ```ts
 * app.use('/auth/scheduling', schedulingOAuth({
 *   clientId, clientSecret, authUrl, redirectUri: 'https://app.example.com/auth/scheduling/callback',
 *   tokenStore, cookieSecret: process.env.COOKIE_SECRET,
 * }))
 * ```
 */
export function schedulingOAuth(options: OAuthRoutesOptions<Request>): SchedulingOAuthMiddleware {
  const routes = createOAuthRoutes<Request>(options)
  const middleware = ((req, res, next) => {
    routes
      .handle({
        method: req.method,
        path: req.url,
        headers: req.headers,
        mountPath: req.baseUrl,
        raw: req,
        secure: req.secure,
      })
      .then((answer) => writeNode(res, answer, next), next)
  }) as SchedulingOAuthMiddleware
  return Object.assign(middleware, {
    routes,
    connectedKey: (req: Request) => routes.connectedKey(req.headers),
  })
}
