import type { CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { ReplayOptions, ReplayReport } from '../ledger/replay.js'
import type { LedgerFilter } from '../ledger/store.js'
import type { WebhookHandler, WebhookRegistration } from './contract.js'

/** Handler registration on an adapter's middleware; each method returns the middleware. */
export interface WebhookMethods<Self> extends WebhookRegistration<Self> {
  /** The core handler, for `dispatch()` from a queue consumer. */
  readonly handler: WebhookHandler
  /** The handler's `health()`: its dedupe store, queue and subscriptions' store. */
  health(options?: HealthOptions): Promise<HealthReport>
  /** The handler's `replay()`: recorded deliveries run again (option `ledger`). */
  replay(target: string | LedgerFilter, options?: ReplayOptions): Promise<ReplayReport>
  /** The handler's `catchUp()`: missed changes recovered from the API (option `ledger`). */
  catchUp(options?: CatchUpOptions): Promise<CatchUpReport>
}

/** Gives an adapter's middleware `on`, `onAny`, `onError`, `health`, `replay` and `handler`, delegating to core. */
export function attachWebhookMethods<Self extends WebhookMethods<Self>>(
  target: object,
  handler: WebhookHandler,
): Self {
  const self = target as Self
  const methods: WebhookMethods<Self> = {
    handler,
    health: (options) => handler.health(options),
    replay: (target, options) => handler.replay(target, options),
    catchUp: (options) => handler.catchUp(options),
    on(pattern, fn) {
      handler.on(pattern, fn)
      return self
    },
    onAny(fn) {
      handler.onAny(fn)
      return self
    },
    onError(fn) {
      handler.onError(fn)
      return self
    },
  }
  return Object.assign(target, methods) as Self
}
