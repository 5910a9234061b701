// A webhook handler whose options are read at its first delivery (`createWebhookHandler` given
// a deferred `createScheduling(() => options)`): handlers registered before are kept and given
// to the real handler when it is built, so a route module can register them at import, where
// the runtime's environment may be absent (`next build`).
import { Once } from '../deferred.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { CatchUpOptions, CatchUpReport } from '../ledger/catch-up-options.js'
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

  constructor(build: () => WebhookHandler) {
    this.#once = new Once(() => {
      const handler = build()
      for (const register of this.#registered) register(handler)
      return handler
    })
  }

  get #real(): WebhookHandler {
    return this.#once.value
  }

  #register(register: (handler: WebhookHandler) => void): this {
    if (this.#once.built) register(this.#real)
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
    return this.#real.handle(request)
  }

  async fetch(request: Request): Promise<Response> {
    return this.#real.fetch(request)
  }

  async dispatch(event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void> {
    return this.#real.dispatch(event, context)
  }

  async health(options?: HealthOptions): Promise<HealthReport> {
    return this.#real.health(options)
  }

  async replay(target: string | LedgerFilter, options?: ReplayOptions): Promise<ReplayReport> {
    return this.#real.replay(target, options)
  }

  async catchUp(options?: CatchUpOptions): Promise<CatchUpReport> {
    return this.#real.catchUp(options)
  }
}
