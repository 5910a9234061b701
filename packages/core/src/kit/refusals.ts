import { serverText } from '../errors/errors.js'
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

/** Marks the errors an adapter emits itself (`eventLogger`): a refusal filter passes them on. */
const OWN_ERROR = Symbol.for('scheduling-kit.own-error')

/**
 * A `Logger` for a framework that reports errors as events (an `error` event whose default
 * listener prints the stack): `error` builds an Error (status 500; its first line the message,
 * the whole text its stack) and hands it to `emit`; the other levels go to the console.
 */
export function eventLogger(emit: (error: Error) => void): Logger {
  return {
    ...consoleLogger,
    error(message) {
      const error = Object.assign(new Error(message.split('\n', 1)[0]), {
        status: 500,
        [OWN_ERROR]: true,
      })
      error.stack = message
      emit(error)
    },
  }
}

/**
 * For a framework's error listener: reports a body parser's refusal (a 4xx error on `path`,
 * matched as a suffix since a mount may prefix it) through `parserRefusalReporter`, and says
 * so; any other error (or one `eventLogger` emitted) is left to the framework's own listener.
 */
export function parserRefusalFilter(
  path: string,
): (error: unknown, requestPath: string | undefined) => boolean {
  const report = parserRefusalReporter(path)
  return (error, requestPath) => {
    const { status, message } = (error ?? {}) as { status?: unknown; message?: unknown }
    const refused =
      typeof status === 'number' &&
      status >= 400 &&
      status < 500 &&
      requestPath?.endsWith(path) === true &&
      (error as Record<symbol, unknown>)[OWN_ERROR] !== true
    if (refused) report(status, String(message))
    return refused
  }
}

/** An app that reports errors as `error` events, with a default listener (`onerror`). */
export interface ErrorEventApp {
  listeners(event: 'error'): unknown[]
  removeListener(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'error', listener: (error: Error, context?: { path?: string }) => void): unknown
  emit(event: 'error', error: Error): unknown
  onerror(error: Error): void
}

const quietApps = new WeakSet<object>()
const appLoggers = new WeakMap<object, Logger>()

/**
 * When the app's default listener is its only `error` listener, routes body parsers' refusals
 * on the webhook path (`parserRefusalFilter`) to the summary, and every other error to that
 * listener. Once per app; an app with listeners of its own is left as it is.
 */
export function quietParserRefusals(app: ErrorEventApp, path: string): void {
  if (quietApps.has(app)) return
  quietApps.add(app)
  const listeners = app.listeners('error')
  if (listeners.length !== 1 || listeners[0] !== app.onerror) return
  const refusal = parserRefusalFilter(path)
  app.removeListener('error', app.onerror)
  app.on('error', (error, context) => {
    if (!refusal(error, context?.path)) app.onerror(error)
  })
}

/** The app's `eventLogger`, emitting `error` events on it (one per app). */
export function appEventLogger(app: ErrorEventApp): Logger {
  let logger = appLoggers.get(app)
  if (logger === undefined) {
    logger = eventLogger((error) => app.emit('error', error))
    appLoggers.set(app, logger)
  }
  return logger
}
