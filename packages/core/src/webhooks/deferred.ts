// A webhook handler whose options are read at its first delivery (`createWebhookHandler` given
// a deferred `createScheduling(() => options)`): handlers registered before are kept and given
// to the real handler when it is built, so a route module can register them at import, where
// the runtime's environment may be absent (`next build`).

import type { CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
import { isPromise, Once } from '../deferred.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { ReplayOptions, ReplayReport } from '../ledger/replay.js'
import type { LedgerFilter } from '../ledger/store.js'
import type { WebhookResponse } from './answer.js'
import type { WebhookContext, WebhookHandlerFn } from './context.js'
import type { WebhookHandler } from './contract.js'
import type { AnyWebhookEvent } from './events.js'
import type { WebhookErrorFn } from './options.js'
import type { EventPattern, EventsMatching } from './registry.js'
import type { WebhookRequest } from './request.js'

export class DeferredWebhookHandler implements WebhookHandler {
  readonly #once: Once<WebhookHandler>
  readonly #registered: ((handler: WebhookHandler) => void)[] = []
  /** The real handler, once built: handlers registered from then on go to it at once. */
  #handler: WebhookHandler | undefined

  /**
   * `build` may be asynchronous (`lazyScheduling`): deliveries wait for it, and `path` and
   * `bodyLimit`, read before it resolved, throw `pending()`.
   */
  constructor(build: () => WebhookHandler | Promise<WebhookHandler>, pending?: () => Error) {
    const registered = (handler: WebhookHandler) => {
      this.#handler = handler
      for (const register of this.#registered.splice(0)) register(handler)
      return handler
    }
    this.#once = new Once(() => {
      const out = build()
      return isPromise(out) ? out.then(registered) : registered(out)
    }, pending)
  }

  get #real(): WebhookHandler {
    return this.#once.value
  }

  #register(register: (handler: WebhookHandler) => void): this {
    if (this.#handler !== undefined) register(this.#handler)
    else this.#registered.push(register)
    return this
  }

  on<P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): this {
    return this.#register((handler) => handler.on(pattern, fn))
  }

  onAny(fn: WebhookHandlerFn): this {
    return this.#register((handler) => handler.onAny(fn))
  }

  onError(fn: WebhookErrorFn): this {
    return this.#register((handler) => handler.onError(fn))
  }

  get path(): string {
    return this.#real.path
  }

  get bodyLimit(): number {
    return this.#real.bodyLimit
  }

  async handle(request: WebhookRequest): Promise<WebhookResponse | undefined> {
    return (await this.#once.get()).handle(request)
  }

  async fetch(request: Request): Promise<Response> {
    return (await this.#once.get()).fetch(request)
  }

  async dispatch(event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void> {
    return (await this.#once.get()).dispatch(event, context)
  }

  async health(options?: HealthOptions): Promise<HealthReport> {
    return (await this.#once.get()).health(options)
  }

  async replay(target: string | LedgerFilter, options?: ReplayOptions): Promise<ReplayReport> {
    return (await this.#once.get()).replay(target, options)
  }

  async catchUp(options?: CatchUpOptions): Promise<CatchUpReport> {
    return (await this.#once.get()).catchUp(options)
  }
}
