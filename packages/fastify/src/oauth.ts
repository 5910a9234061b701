import { OAUTH_PATHS, requireCookieSecret, underMount } from '@scheduling-kit/core/adapter'
import type { OAuthRoutes, OAuthRoutesOptions } from '@scheduling-kit/core/oauth'
import { createOAuthRoutes } from '@scheduling-kit/core/oauth'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { ALL_METHODS, keepRawStream, requestLogger, send } from './shared.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The key of the scheduling account this browser connected (from its signed cookie), or
     * `undefined`. Added by `schedulingOAuth` to the requests of the context it is registered in.
     */
    schedulingConnectedKey(): Promise<string | undefined>
  }
}

export interface SchedulingOAuthOptions extends OAuthRoutesOptions<FastifyRequest> {
  /** Where the routes live, as Fastify's `prefix` register option. Default: none. */
  prefix?: string
}

/** The OAuth routes as an encapsulated plugin: their own raw-body parser, their own paths. */
function oauthRoutes(routes: OAuthRoutes<FastifyRequest>): FastifyPluginAsync {
  return async (fastify) => {
    keepRawStream(fastify)
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const answer = await routes.handle({
        method: request.method,
        path: underMount(request.url, fastify.prefix) ?? request.url,
        headers: request.headers,
        mountPath: fastify.prefix,
        raw: request,
        secure: request.protocol === 'https',
        logger: requestLogger(request),
      })
      return answer ? send(reply, answer) : reply.callNotFound()
    }
    // Each route with every method: core answers a wrong one 405 with its Allow header.
    for (const path of OAUTH_PATHS) {
      for (const url of [path, `${path}/`]) fastify.route({ method: ALL_METHODS, url, handler })
    }
  }
}

/**
 * `app.register(schedulingOAuth, { prefix: '/auth/scheduling', ... })`: `GET /login`,
 * `GET /callback` and `POST /disconnect` under the prefix, and
 * `request.schedulingConnectedKey()` on the requests of the context it is registered in (the
 * routes stay encapsulated; the decorator is not).
 *
 * @example
 * ```ts
 * await app.register(schedulingOAuth, {
 *   prefix: '/auth/scheduling', clientId, clientSecret, authUrl,
 *   redirectUri: 'https://app.example.com/auth/scheduling/callback', tokenStore, cookieSecret,
 * })
 * app.get('/me', async (request) => ({ key: await request.schedulingConnectedKey() }))
 * ```
 */
export const schedulingOAuth: FastifyPluginAsync<SchedulingOAuthOptions> = Object.assign(
  async (fastify: FastifyInstance, options: SchedulingOAuthOptions) => {
    // Registered at boot and shared by every process: no random per-process secret here.
    requireCookieSecret(options?.cookieSecret)
    const { prefix, ...rest } = options
    const routes = createOAuthRoutes<FastifyRequest>(rest)
    fastify.decorateRequest('schedulingConnectedKey', function (this: FastifyRequest) {
      return routes.connectedKey(this.headers)
    })
    await fastify.register(oauthRoutes(routes), { prefix: prefix ?? '' })
  },
  // Like fastify-plugin: the decorator reaches the app's routes; the routes get their own
  // encapsulated context, with the prefix, from the register call above.
  { [Symbol.for('skip-override')]: true },
)
