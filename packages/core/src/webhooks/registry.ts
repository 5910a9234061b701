import { ConfigError, serverText, WebhookError } from '../errors/errors.js'
import { isThenable } from '../thenable.js'
import type { WebhookContext, WebhookHandlerFn } from './context.js'
import type { AnyWebhookEvent, WebhookEvent, WebhookEventType } from './events.js'
import type { DeliveryWatch } from './telemetry/contract.js'

type Prefixes<T extends string> = T extends `${infer Head}.${infer Rest}`
  ? Head | `${Head}.${Prefixes<Rest>}`
  : never

/** `event.*`, `event.checkout.*`, `poll.*`, ...: every prefix of a known event type. */
export type EventPrefixPattern = `${Prefixes<WebhookEventType>}.*`

/** What `on()` accepts: an event type, a prefix pattern such as `event.checkout.*`, or `*`. */
export type EventPattern = WebhookEventType | EventPrefixPattern | '*'

/** The events a pattern matches. */
export type EventsMatching<P extends EventPattern> = P extends '*'
  ? AnyWebhookEvent
  : P extends `${infer Prefix}.*`
    ? WebhookEvent<Extract<WebhookEventType, `${Prefix}.${string}`>>
    : P extends WebhookEventType
      ? WebhookEvent<P>
      : never

/** Handlers given declaratively: `{ 'event.created': fn, 'event.checkout.*': [fn1, fn2] }`. */
export type HandlerMap = {
  [P in EventPattern]?: WebhookHandlerFn<EventsMatching<P>> | WebhookHandlerFn<EventsMatching<P>>[]
}

/** Which handlers run for which type: exact types, then prefixes, then catch-alls. */
export class HandlerRegistry {
  readonly #exact = new Map<string, WebhookHandlerFn[]>()
  readonly #prefixes: Array<[string, WebhookHandlerFn]> = []
  readonly #any: WebhookHandlerFn[] = []
  /** Handlers registered, catch-alls included. */
  count = 0

  add(pattern: string, fn: WebhookHandlerFn): void {
    if (typeof pattern !== 'string' || pattern === '' || pattern === '.*') {
      throw new ConfigError(
        `on(): "${String(pattern)}" is neither an event type nor a pattern such as "event.*".`,
      )
    }
    if (typeof fn !== 'function') {
      throw new ConfigError(`on("${pattern}"): the handler must be a function.`)
    }
    this.count++
    if (pattern === '*') this.#any.push(fn)
    else if (pattern.endsWith('.*')) this.#prefixes.push([pattern.slice(0, -1), fn])
    else {
      const list = this.#exact.get(pattern)
      if (list) list.push(fn)
      else this.#exact.set(pattern, [fn])
    }
  }

  addMap(map: HandlerMap): void {
    for (const [pattern, fns] of Object.entries(map)) {
      for (const fn of Array.isArray(fns) ? fns : [fns]) this.add(pattern, fn as WebhookHandlerFn)
    }
  }

  matching(type: string): readonly WebhookHandlerFn[] {
    const exact = this.#exact.get(type)
    if (exact === undefined && this.#prefixes.length === 0) return this.#any
    const out = exact === undefined ? [] : [...exact]
    for (const [prefix, fn] of this.#prefixes) if (type.startsWith(prefix)) out.push(fn)
    out.push(...this.#any)
    return out
  }

  /**
   * Runs every handler that matches, concurrently. Throws (or rejects with) `handler_failed`,
   * with the handlers' errors as `cause`, when any of them threw or rejected. Completes
   * without a pause when every handler returned synchronously.
   */
  dispatch(
    event: AnyWebhookEvent,
    context: WebhookContext,
    watch?: DeliveryWatch,
  ): void | Promise<void> {
    const fns = this.matching(event.type)
    // Allocated only when a handler fails or is async: nothing is built for the common case.
    let errors: unknown[] | undefined
    let pending: PromiseLike<unknown>[] | undefined
    for (let i = 0; i < fns.length; i++) {
      try {
        const result =
          watch === undefined ? fns[i]!(event, context) : watch.run(fns[i]!, i, event, context)
        if (isThenable(result)) {
          pending ??= []
          pending.push(result)
        }
      } catch (error) {
        errors ??= []
        errors.push(error)
      }
    }
    if (pending === undefined) {
      if (errors !== undefined) throw handlersFailed(event, fns.length, errors)
      return
    }
    return Promise.allSettled(pending).then((results) => {
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []))
      const all = errors === undefined ? failed : [...errors, ...failed]
      if (all.length > 0) throw handlersFailed(event, fns.length, all)
    })
  }
}

/** `handler_failed`, with the handlers' errors as `cause`. */
function handlersFailed(event: AnyWebhookEvent, count: number, errors: unknown[]): WebhookError {
  return new WebhookError(
    'handler_failed',
    `${errors.length} of ${count} handlers for ${serverText(event.type, 100)} (${event.id}) failed; ` +
      'answered 500 so the service delivers it again.',
    { cause: errors.length === 1 ? errors[0] : new AggregateError(errors, 'handlers failed') },
  )
}
