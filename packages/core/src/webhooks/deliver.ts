import { ClaimRecord, type DeliveryOutcome } from '../claims/record.js'
import { ConfigError, WebhookError } from '../errors/errors.js'
import type { DeliveryLedger } from '../ledger/ledger.js'
import type { ReplayRunner } from '../ledger/runner.js'
import { isThenable } from '../thenable.js'
import { notRun, received, removed, type WebhookResponse } from './answer.js'
import { HANDLER_CLAIM } from './defaults.js'
import { parseEnvelope } from './envelope.js'
import type { AnyWebhookEvent } from './events.js'
import { enqueueFailed, type WebhookQueue } from './queue.js'
import type { Received } from './receive.js'
import type { HandlerRegistry } from './registry.js'
import type { Settings } from './settings.js'
import type { DeliveryWatch } from './telemetry/contract.js'

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
 * Delivers a verified event through its record (`settings.record`: the ledger, the dedupe
 * claim, or none): run by the handlers, or handed to the queue. A retry of a delivery handled
 * already is answered 200 without running anything; one still being handled, 409. `watch`,
 * when something observes the delivery, gets its spans and metrics.
 */
export function deliverOnce(
  delivery: Received,
  settings: Settings,
  registry: HandlerRegistry,
  watch?: DeliveryWatch,
): WebhookResponse | Promise<WebhookResponse> {
  if (delivery.removed) return removed()
  const { queue } = settings
  // A watched claim is made per delivery: its spans are the delivery's children.
  const record =
    watch === undefined || settings.dedupe === undefined
      ? settings.record
      : new ClaimRecord(watch.dedupe(settings.dedupe), HANDLER_CLAIM)
  const { event, context, key } = delivery
  const verified = {
    envelope: event,
    key,
    webhookId: context.webhookId,
    account: context.account,
    text: delivery.text,
  }
  const outcome =
    queue === undefined
      ? record.deliver(verified, (extra) =>
          registry.dispatch(event, extra === undefined ? context : { ...context, ...extra }, watch),
        )
      : record.handOff(verified, () => deliver(delivery, key, queue, registry, watch))
  const answer = (came: DeliveryOutcome): WebhookResponse => {
    if (came === 'busy') throw inProgress(event.id)
    return came === 'ran' ? received() : notRun(came)
  }
  // Synchronous when the record and the handlers are: no promise of its own.
  return isThenable(outcome) ? outcome.then(answer) : answer(outcome)
}

/** 409: the payload `id` is held by another attempt now; the service delivers it again. */
export function inProgress(id: string): WebhookError {
  return new WebhookError(
    'delivery_in_progress',
    `${id} is being handled by an earlier delivery; answered 409 so the service tries again later.`,
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
