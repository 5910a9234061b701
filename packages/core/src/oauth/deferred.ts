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

  /** `build` may be asynchronous (`lazyScheduling`): requests wait for it; `oauth`, read before it resolved, throws `pending()`. */
  constructor(build: () => OAuthRoutes<Req> | Promise<OAuthRoutes<Req>>, pending?: () => Error) {
    this.#once = new Once(build, pending)
  }

  get oauth(): OAuthClient {
    return this.#once.value.oauth
  }

  async handle(request: OAuthRequest<Req>): Promise<OAuthResponse | undefined> {
    return (await this.#once.get()).handle(request)
  }

  async fetch(request: Request, options?: { mountPath?: string }): Promise<Response> {
    return (await this.#once.get()).fetch(request, options)
  }

  async connectedKey(headers: HeadersInput): Promise<string | undefined> {
    return (await this.#once.get()).connectedKey(headers)
  }
}
