import { ConfigError } from '../errors/errors.js'
import { isThenable } from '../thenable.js'
import { received } from '../webhooks/answer.js'
import { enqueueFailed, type WebhookQueue } from '../webhooks/queue.js'
import { contextOf, needs, type WebhookPart } from './path.js'

// The last part that hands deliveries to a durable queue, answered 200 once it accepted them
// (503 `queue_rejected` otherwise, so the service delivers it again); a worker runs the
// handlers. A record before it hands the delivery off (recorded, then put in).

/** Puts each delivery in `queue` under its dedupe key, the queue's job id. */
export function enqueueTo(queue: WebhookQueue): WebhookPart {
  if (typeof queue?.enqueue !== 'function')
    throw new ConfigError('enqueueTo: queue must have an enqueue(event) method.')
  const part = (delivery: Parameters<WebhookPart>[0]) => {
    const event = needs(delivery, 'event', 'enqueueTo', 'parseEvent')
    const context = contextOf(delivery)
    const key = delivery.key ?? event.id
    let queued: unknown
    try {
      queued =
        delivery.watch === undefined
          ? queue.enqueue(event, context, { key })
          : delivery.watch.enqueue(queue, event, context, key)
    } catch (cause) {
      throw enqueueFailed(event, cause)
    }
    if (!isThenable(queued)) return received()
    return Promise.resolve(queued).then(received, (cause) => {
      throw enqueueFailed(event, cause)
    })
  }
  return Object.assign(part, { queues: true as const })
}
