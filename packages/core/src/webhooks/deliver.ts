import { runOnce } from '../claims/run-once.js'
import { serverText, WebhookError } from '../errors/errors.js'
import { isThenable } from '../thenable.js'
import { duplicate, received, removed, type WebhookResponse } from './answer.js'
import type { AnyWebhookEvent } from './events.js'
import type { Settings } from './options.js'
import type { WebhookQueue } from './queue.js'
import type { Received } from './receive.js'
import type { HandlerRegistry } from './registry.js'
import type { DeliveryWatch } from './watching.js'

function enqueueFailed(event: AnyWebhookEvent, cause: unknown): WebhookError {
  return new WebhookError(
    'queue_rejected',
    `The queue did not accept ${serverText(event.type, 100)} (${event.id}); answered 503 so the service delivers it again.`,
    { cause },
  )
}

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
  const { queue } = settings
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
    throw new WebhookError(
      'delivery_in_progress',
      `${event.id} is being handled by an earlier delivery; answered 409 so the service tries again later.`,
    )
  }
  return isThenable(running) ? running.then(answer) : answer(running)
}
