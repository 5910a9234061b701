import { consoleLogger, type Logger } from '../log.js'
import { WebhookLog } from '../webhooks/log.js'
import { endedWith, type WebhookPart } from './path.js'

// The log as a part: every error answer of the parts after it told to `logger`, as the preset
// tells them (a refusal's first of a kind in full, then a count once a minute; a server error
// with its cause). No line carries a secret, the expected signature or the body.

/** Logs the error answers of the parts after it; put it first (or after `traced()`). */
export function logErrors(logger: Logger = consoleLogger): WebhookPart {
  const log = new WebhookLog()
  return async (delivery, next) => {
    try {
      return await next()
    } catch (caught) {
      const error = endedWith(caught)
      log.report(logger, error, delivery)
      throw error
    }
  }
}
