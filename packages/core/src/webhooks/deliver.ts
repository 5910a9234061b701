import { runOnce } from '../claims/run-once.js'
import { ConfigError, WebhookError } from '../errors/errors.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { ReplayRunner } from '../ledger/replay.js'
import { isThenable } from '../thenable.js'
import { duplicate, json, received, removed, type WebhookResponse } from './answer.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import { enqueueFailed, type WebhookQueue } from './queue.js'
import type { Received } from './receive.js'
import type { HandlerRegistry } from './registry.js'
import type { Settings } from './settings.js'
import type { DeliveryWatch } from './watching.js'

/** How often a claim is renewed while the handlers run, with a store that can (`extend`). */
const CLAIM_RENEW_MS = 10_000
/** How long a failed `complete` or `release` is retried before it is left to lapse. */
const SETTLE_MS = 5_000

/** Hands the event to the queue or the handlers; a promise only when one of them is async. */
function deliver(
  { event, context }: Received,
  key: string,
  queue: WebhookQueue | undefined,
  registry: HandlerRegistry,
  watch: DeliveryWatch | undefined,
): void | Promise<void> {
  if (queue === undefined) return registry.dispatch(event, context, watch)
  let queued: unknown
  try {
    queued =
      watch === undefined
        ? queue.enqueue(event, context, { key })
        : watch.enqueue(queue, event, context, key)
  } catch (cause) {
    throw enqueueFailed(event, cause)
  }
  if (isThenable(queued)) {
    return Promise.resolve(queued).then(
      () => {},
      (cause) => {
        throw enqueueFailed(event, cause)
      },
    )
  }
}

/**
 * Delivers a verified event once: claims its payload id in the dedupe store, runs the handlers
 * (or enqueues), then marks it completed, or releases it for the retry when they failed. A
 * retry of a completed event is answered 200 without running anything; one still being
 * handled, 409. `watch`, when something observes the delivery, gets its spans and metrics.
 */
export function deliverOnce(
  delivery: Received,
  settings: Settings,
  registry: HandlerRegistry,
  watch?: DeliveryWatch,
): WebhookResponse | Promise<WebhookResponse> {
  const { queue, ledger } = settings
  if (ledger !== undefined) return throughLedger(delivery, ledger, queue, registry, watch)
  const dedupe =
    watch === undefined || settings.dedupe === undefined
      ? settings.dedupe
      : watch.dedupe(settings.dedupe)
  const { event } = delivery
  if (delivery.removed) return removed()
  const { key } = delivery
  if (dedupe === undefined) {
    // Synchronous when the handlers (or the queue) are: no promise of its own.
    const delivered = deliver(delivery, key, queue, registry, watch)
    return isThenable(delivered) ? delivered.then(received) : received()
  }
  // The claim follows the handlers: renewed while they run, when the store can.
  const running = runOnce(
    { store: dedupe, key, renewMs: CLAIM_RENEW_MS, settleMs: SETTLE_MS },
    () => deliver(delivery, key, queue, registry, watch),
  )
  const answer = (once: Awaited<typeof running>): WebhookResponse => {
    if (once.ran) return received()
    if (once.claim === 'completed') return duplicate()
    throw inProgress(event)
  }
  return isThenable(running) ? running.then(answer) : answer(running)
}

/** 200 answers of deliveries the ledger did not run: handled already, stale, or dead. */
const SKIPPED = {
  done: duplicate,
  stale: () => json(200, { received: true, stale: true }),
  dead: () => json(200, { received: true, dead: true }),
}

/**
 * A verified delivery through the ledger (option `ledger`), which is the dedupe record then:
 * into the queue and recorded `received`, or run under the ledger's lease with its outcome
 * recorded. The ledger's code comes with the ledger object: a handler without one pays nothing.
 */
async function throughLedger(
  delivery: Received,
  ledger: DeliveryLedger,
  queue: WebhookQueue | undefined,
  registry: HandlerRegistry,
  watch: DeliveryWatch | undefined,
): Promise<WebhookResponse> {
  if (delivery.removed) return removed()
  const { event, context, key, text } = delivery
  const verified = {
    envelope: event,
    key,
    webhookId: context.webhookId,
    account: context.account,
    text,
  }
  if (queue !== undefined) {
    // Recorded, then into the queue (its job id is the key: a retry makes no second job).
    return (await ledger.handOff(verified, () => deliver(delivery, key, queue, registry, watch)))
      ? received()
      : duplicate()
  }
  const outcome = await ledger.deliver(verified, (extra) =>
    registry.dispatch(event, { ...context, ...extra }, watch),
  )
  if (outcome === 'ran') return received()
  if (outcome === 'busy') throw inProgress(event)
  return SKIPPED[outcome]()
}

function inProgress(event: AnyWebhookEvent): WebhookError {
  return new WebhookError(
    'delivery_in_progress',
    `${event.id} is being handled by an earlier delivery; answered 409 so the service tries again later.`,
  )
}

/**
 * The handler's ledger for `replay()` and `catchUp()`, with what they run through: this
 * handler's registry, or its queue when it has one (the ledger says what it refuses). A
 * `ConfigError` naming the option when the handler has no ledger.
 */
export function ledgerRun(
  ledger: DeliveryLedger | undefined,
  registry: HandlerRegistry,
  queue: WebhookQueue | undefined,
): Promise<[DeliveryLedger, ReplayRunner<AnyWebhookEvent>]> {
  if (ledger === undefined)
    return Promise.reject(new ConfigError('replay() and catchUp() need the ledger option.'))
  return Promise.resolve([
    ledger,
    {
      parse: parseEnvelope,
      dispatch: (event, context) =>
        registry.dispatch(event, { secretIndex: 0, headers: {}, ...context }),
      handlers: registry.count > 0,
      queue,
    },
  ])
}
