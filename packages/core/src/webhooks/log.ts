import { serverText, type WebhookError } from '../errors/errors.js'
import { describeError, emit, type Logger, Summarizer } from '../log.js'
import type { WebhookErrorContext } from './options.js'

/** Codes told once per cause: set-up mistakes that every request would repeat. */
const ONCE = /* @__PURE__ */ new Set(['body_parsed', 'secret_whitespace'])

/**
 * What the webhook endpoint tells the developer, and how often:
 * - a failure after the signature was verified (a handler threw, the queue or the dedupe store
 *   failed): every time, at `error`, with the stack of what threw;
 * - `body_parsed` and `secret_whitespace`: once per cause, at `warn`;
 * - `dedupe_evicted`: at `warn` (already at most once a minute);
 * - `delivery_in_progress`: at `debug`;
 * - any other refusal (401, 400, 405, 408, 413, 415, a secret lookup that failed): the first
 *   of each code in full, then a count once a minute, so a sender cannot flood the log.
 * No line carries a secret, the expected signature or the body.
 */
export class WebhookLog {
  readonly #said = new Set<string>()
  readonly #summaries = new Summarizer()

  report(logger: Logger, error: WebhookError, context: WebhookErrorContext): void {
    // The webhook id header is the sender's to choose: capped and cleaned like server text.
    const where =
      context.webhookId === undefined ? '' : ` (webhook ${serverText(context.webhookId, 64)})`
    const line = `scheduling-kit: webhook answered ${error.status} ${error.code}${where}: ${error.message}`
    const cause =
      error.status >= 500 && error.cause !== undefined ? `\n${describeError(error.cause)}` : ''
    if (error.code === 'dedupe_evicted') {
      emit(logger, 'warn', `scheduling-kit: ${error.message}`)
    } else if (error.code === 'delivery_in_progress') {
      emit(logger, 'debug', line)
    } else if (ONCE.has(error.code)) {
      // One line per distinct cause (the message names the framework's fix).
      const kind = `${error.code}:${error.message.replace(/\d+/g, '#')}`
      if (!this.#said.has(kind)) {
        this.#said.add(kind)
        emit(logger, 'warn', `${line} (told once)`)
      }
    } else if (context.event !== undefined && error.status >= 500) {
      // The sender proved it holds the secret: every one is worth a line.
      emit(logger, 'error', `${line}${cause}`)
    } else {
      const level = error.status >= 500 ? 'error' : error.status === 401 ? 'warn' : 'info'
      this.#summaries.note(
        logger,
        level,
        error.code,
        `${line}${cause}\n(Further ${error.code} answers are counted and reported once a minute.)`,
        (count) =>
          `scheduling-kit: ${count} more webhook request(s) answered ${error.status} ${error.code} in the last minute.`,
      )
    }
  }
}
