// OAuth routes whose options are read at their first request (`createOAuthRoutes` given a
// deferred `createScheduling(() => options)`), so a route module can make them at import, where
// the runtime's environment may be absent (`next build`).
import { Once } from '../deferred.js'
import type { HeadersInput } from '../http/headers.js'
import type { OAuthClient } from './client.js'
import type { OAuthRequest, OAuthResponse } from './options.js'
import type { OAuthRoutes } from './routes.js'

/** The routes of deferred options: built at the first request (or the first read of `oauth`). */
export class DeferredOAuthRoutes<Req> implements OAuthRoutes<Req> {
  readonly #once: Once<OAuthRoutes<Req>>

  constructor(build: () => OAuthRoutes<Req>) {
    this.#once = new Once(build)
  }

  get oauth(): OAuthClient {
    return this.#once.value.oauth
  }

  async handle(request: OAuthRequest<Req>): Promise<OAuthResponse | undefined> {
    return this.#once.value.handle(request)
  }

  async fetch(request: Request, options?: { mountPath?: string }): Promise<Response> {
    return this.#once.value.fetch(request, options)
  }

  async connectedKey(headers: HeadersInput): Promise<string | undefined> {
    return this.#once.value.connectedKey(headers)
  }
}
