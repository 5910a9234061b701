import { catchUpOf } from '../catch-up/loaders.js'
import type { CatchUpAccounts, CatchUpOptions, CatchUpReport } from '../catch-up/options.js'
import { MemoryDedupeStore } from '../claims/dedupe.js'
import { deferredPart } from '../deferred.js'
import { isWebhookError, WebhookError } from '../errors/errors.js'
import { checkHealth } from '../health/health.js'
import type { HealthOptions, HealthReport } from '../health/report.js'
import type { ReplayOptions, ReplayReport } from '../ledger/replay.js'
import type { LedgerFilter } from '../ledger/store.js'
import { consoleLogger, describeError, type Logger } from '../log.js'
import { watchDedupeStore } from '../telemetry/watched.js'
import { isThenable } from '../thenable.js'
import { errorAnswer, type WebhookResponse } from './answer.js'
import type { WebhookContext, WebhookHandlerFn } from './context.js'
import type { WebhookHandler } from './contract.js'
import { deliverOnce, ledgerRun } from './deliver.js'
import type { AnyWebhookEvent } from './events.js'
import { watchEvictions } from './evictions.js'
import { answerFetch } from './fetch.js'
import { WebhookLog } from './log.js'
import { ageOf, refuseOld } from './old-body.js'
import type {
  WebhookErrorContext,
  WebhookErrorFn,
  WebhookHandlerOptions,
  WebhookHandlerRestOptions,
} from './options.js'
import { receive } from './receive.js'
import { type EventPattern, type EventsMatching, HandlerRegistry } from './registry.js'
import type { WebhookRequest } from './request.js'
import type { SecretSource } from './secrets.js'
import { normalizePath, resolveSettings, type Settings } from './settings.js'
import type { DeliveryObserver, DeliveryWatch } from './telemetry/contract.js'
import { observer } from './telemetry/switch.js'

class Endpoint implements WebhookHandler {
  readonly #settings: Settings
  readonly #registry = new HandlerRegistry()
  readonly #errorListeners: WebhookErrorFn[] = []
  readonly #log = new WebhookLog()
  readonly path: string
  readonly bodyLimit: number

  constructor(
    input: SecretSource | WebhookHandlerOptions | undefined,
    rest?: WebhookHandlerRestOptions,
  ) {
    const settings = resolveSettings(input, rest)
    this.#settings = settings
    this.path = settings.path
    this.bodyLimit = settings.limit
    const given: Partial<WebhookHandlerOptions> =
      rest ??
      (typeof input === 'object' && !Array.isArray(input) ? (input as WebhookHandlerOptions) : {})
    if (given.on) this.#registry.addMap(given.on)
    if (given.onAny) this.#registry.add('*', given.onAny)
    if (given.onError) this.#errorListeners.push(given.onError)
    if (settings.dedupe instanceof MemoryDedupeStore) {
      watchDedupeStore(settings.dedupe)
      watchEvictions(settings.dedupe, (error) => {
        void this.#report(
          error,
          { webhookId: undefined, event: undefined },
          this.#settings.logger ?? consoleLogger,
        )
      })
    }
  }

  // Own properties, bound: `export default { fetch: handler.fetch }` and destructuring work.
  on = <P extends EventPattern>(
    pattern: P | readonly P[],
    fn: WebhookHandlerFn<EventsMatching<P>>,
  ): WebhookHandler => {
    for (const p of typeof pattern === 'string' ? [pattern] : pattern) {
      this.#registry.add(p, fn as WebhookHandlerFn)
    }
    return this
  }

  onAny = (fn: WebhookHandlerFn): WebhookHandler => {
    this.#registry.add('*', fn)
    return this
  }

  onError = (fn: WebhookErrorFn): WebhookHandler => {
    this.#errorListeners.push(fn)
    return this
  }

  handle = (request: WebhookRequest): Promise<WebhookResponse | undefined> => {
    // Not an async function (its own promise would cost turns), yet it never throws: a request
    // that is no request rejects, as before.
    try {
      return this.#start(request)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  #start(request: WebhookRequest): Promise<WebhookResponse | undefined> {
    if (normalizePath(request.path) !== this.path) return Promise.resolve(undefined)
    const state: WebhookErrorContext = { webhookId: undefined, event: undefined }
    // Without anything that records: one property read, then the answer.
    const o = observer()
    if (isThenable(o))
      return Promise.resolve(o).then((loaded) => this.#observed(loaded, request, state))
    return this.#observed(o, request, state)
  }

  /** `handle`, under the delivery's span and metrics when something records. */
  #observed(
    o: DeliveryObserver | undefined,
    request: WebhookRequest,
    state: WebhookErrorContext,
  ): Promise<WebhookResponse> {
    const watch = o?.startDelivery(request.method, this.path)
    if (watch === undefined) return this.#answer(request, state, undefined)
    return o!.observeDelivery(watch, state, () => this.#answer(request, state, watch))
  }

  async #answer(
    request: WebhookRequest,
    state: WebhookErrorContext,
    watch: DeliveryWatch | undefined,
  ): Promise<WebhookResponse> {
    try {
      const received =
        watch === undefined
          ? await receive(request, this.#settings, state)
          : await watch.verify(() => receive(request, this.#settings, state))
      const { maxAgeMs } = this.#settings
      const age = maxAgeMs && !received.removed && ageOf(received.event, maxAgeMs)
      if (age) await refuseOld(received, age, this.#settings, this.catchUp)
      const delivered = deliverOnce(received, this.#settings, this.#registry, watch)
      return isThenable(delivered) ? await delivered : delivered
    } catch (caught) {
      const error = isWebhookError(caught)
        ? caught
        : new WebhookError(
            'handler_failed',
            `The webhook could not be processed (${whatFailed(state)} failed); answered 500 so the service delivers it again.`,
            { cause: caught },
          )
      // An adapter that hands server errors to its framework's error path (Express with
      // forwardErrors) has them logged there: not twice.
      const forwarded = request.errorsToFramework === true && error.status >= 500
      // The framework's error handler prints `stack`: make it tell what threw, too.
      if (forwarded) error.stack = describeError(error)
      const logger = forwarded ? undefined : this.#loggerFor(request)
      if (error.status < 500) this.#settings.ledger?.noteRefused(error, state.webhookId)
      await this.#report(error, state, logger)
      return { ...errorAnswer(error), error }
    }
  }

  #loggerFor(request: WebhookRequest): Logger {
    return this.#settings.logger ?? request.logger ?? consoleLogger
  }

  fetch = (request: Request): Promise<Response> => answerFetch(this.handle, request)

  dispatch = async (event: AnyWebhookEvent, context?: Partial<WebhookContext>): Promise<void> => {
    // A queue's worker runs this inside its job's span (`startJobSpan`): the handlers' spans
    // are its children.
    const o = observer()
    const watch = (isThenable(o) ? await o : o)?.watchDispatch()
    // With what the ledger tells a worker's run: a replay, a catch-up, a stale delivery run.
    await this.#registry.dispatch(
      event,
      {
        ...(context as WebhookContext),
        secretIndex: context?.secretIndex ?? 0,
        headers: context?.headers ?? {},
      },
      watch,
    )
  }

  replay = (target: string | LedgerFilter, options?: ReplayOptions): Promise<ReplayReport> =>
    ledgerRun(this.#settings.ledger, this.#registry, this.#settings.queue).then(
      ([ledger, runner]) => ledger.replay(target, options, runner),
    )

  catchUp = async (options?: CatchUpOptions): Promise<CatchUpReport> => {
    const [ledger, run] = await ledgerRun(
      this.#settings.ledger,
      this.#registry,
      this.#settings.queue,
    )
    // The handler's settings took only a ledger that createDeliveryLedger made.
    const { catchUpWith } = await catchUpOf(ledger)!()
    return catchUpWith(ledger, run, this.#settings.subscriptions as CatchUpAccounts, options)
  }

  health = (options?: HealthOptions): Promise<HealthReport> => {
    const { dedupe, queue, subscriptions, ledger } = this.#settings
    return checkHealth({ dedupe, queue, subscriptions, ledger: ledger?.store }, options)
  }

  async #report(
    error: WebhookError,
    state: WebhookErrorContext,
    logger: Logger | undefined,
  ): Promise<void> {
    if (logger !== undefined) this.#log.report(logger, error, state)
    for (const listener of this.#errorListeners) {
      try {
        await listener(error, state)
      } catch {
        // A failing listener must not change the answer.
      }
    }
  }
}

/**
 * A framework-free webhook endpoint: verifies the signature over the raw bytes, parses the
 * envelope, dedupes retries and runs your handlers, answering with the status codes the
 * service's retry logic needs (see the README's table).
 *
 * @example
 * ```ts
 * const webhooks = createWebhookHandler({
 *   secret: process.env.SCHEDULING_SECRET!,
 *   on: { 'event.created': (event) => book(event.payload) },
 * })
 * // Fetch runtimes (Hono, Next.js, Bun, Deno, Workers):
 * export default { fetch: webhooks.fetch }
 * ```
 */
export function createWebhookHandler(
  secretOrOptions: SecretSource | WebhookHandlerOptions | undefined,
  options?: WebhookHandlerRestOptions,
): WebhookHandler {
  // `createScheduling(() => options)`: built at the first delivery, not at import.
  const wait = deferredPart<WebhookHandlerOptions, WebhookHandler>(secretOrOptions, 'webhooks')
  if (wait !== undefined) return wait((built) => new Endpoint(built, options))
  return new Endpoint(secretOrOptions, options)
}

/** What failed when a plain exception (not a refusal) ended a delivery. */
function whatFailed(state: WebhookErrorContext): string {
  return state.event === undefined
    ? 'reading the body or looking up the secret'
    : 'the dedupe store'
}
