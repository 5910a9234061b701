import { received } from '../webhooks/answer.js'
import { type HandlerMap, HandlerRegistry } from '../webhooks/registry.js'
import { contextOf, needs, type WebhookPart } from './path.js'

// The last part that runs the app's handlers before answering: every handler whose pattern
// matches the event, concurrently; 200 once all of them ended, 500 `handler_failed` (the
// service delivers it again) when one threw.

/** Runs the handlers of `map` (`{ 'event.created': fn, 'event.*': [fn1, fn2], '*': fn }`). */
export function handlers(map: HandlerMap): WebhookPart {
  const registry = new HandlerRegistry()
  registry.addMap(map)
  return (delivery) => {
    const event = needs(delivery, 'event', 'handlers', 'parseEvent')
    const ran = registry.dispatch(event, contextOf(delivery), delivery.watch)
    return ran === undefined ? received() : ran.then(received)
  }
}
