import { mountPathOf } from '@scheduling-kit/core/adapter'
import type { OAuthRoutes, OAuthRoutesOptions } from '@scheduling-kit/core/oauth'
import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import { H3, type H3Event } from 'h3'
import { send } from './webhooks.js'

export interface SchedulingOAuthApp extends H3 {
  /** The key of the account this browser connected (from its signed cookie). */
  connectedKey(event: H3Event): Promise<string | undefined>
  readonly routes: OAuthRoutes<H3Event>
}

/**
 * `app.mount('/auth/scheduling', schedulingOAuth(options))`: a sub-app with `GET /login`,
 * `GET /callback` and `POST /disconnect`.
 *
 * @example
 * ```ts
 * app.mount('/auth/scheduling', schedulingOAuth({
 *   clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * }))
 * ```
 */
export function schedulingOAuth(options: OAuthRoutesOptions<H3Event>): SchedulingOAuthApp {
  const routes = createOAuthRoutes<H3Event>(options)
  const app = new H3().use(async (event, next) => {
    // Inside a mounted sub-app h3 strips the base from event.url. On Node, event.req.url follows
    // it, so the original request line is read from the Node request; elsewhere req.url keeps it.
    const full = new URL(event.runtime?.node?.req?.url ?? event.req.url, 'http://h3.invalid')
      .pathname
    const answer = await routes.handle({
      method: event.req.method,
      path: event.url.pathname + event.url.search,
      headers: event.req.headers,
      mountPath: mountPathOf(full, event.url.pathname),
      raw: event,
      secure: event.url.protocol === 'https:',
    })
    return answer ? send(event, answer) : next()
  })
  return Object.assign(app, {
    routes,
    connectedKey: (event: H3Event) => routes.connectedKey(event.req.headers),
  })
}
