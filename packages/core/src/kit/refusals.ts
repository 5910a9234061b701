import { serverText } from '../errors.js'
import { consoleLogger, type Logger, Summarizer } from '../log.js'

/**
 * Reports the refusals a body parser mounted before the webhooks middleware answers on the
 * webhook path (for a framework whose default error listener would print each one's stack, so
 * that a sender could flood the log): the first of each status in full with its fix, then a
 * count once a minute.
 */
export function parserRefusalReporter(
  path: string,
  logger: Logger = consoleLogger,
): (status: number, message: string) => void {
  const summaries = new Summarizer()
  return (status, message) =>
    summaries.note(
      logger,
      'warn',
      `parser-${status}`,
      `scheduling-kit: a body parser mounted before schedulingWebhooks() answered ${status} on ${path} ` +
        `(${serverText(message, 200)}). Mount schedulingWebhooks() before the body parser.\n` +
        `(Further ${status} answers of the parser on ${path} are counted and reported once a minute.)`,
      (count) =>
        `scheduling-kit: ${count} more request(s) on ${path} answered ${status} by a body parser in the last minute.`,
    )
}
