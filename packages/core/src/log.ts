import { ConfigError } from './errors/errors.js'

/**
 * Where scheduling-kit tells the developer what went wrong: `console`, pino, Fastify's
 * `request.log`, winston and consola all fit. Each method is called with one string (for an
 * exception, its stack and its causes' stacks included), as a method of the object.
 */
export interface Logger {
  debug(message: string): void
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

/** The default: `console`, without debug lines (Node's `console.debug` is not filtered). */
export const consoleLogger: Logger = {
  debug() {},
  info: (message) => console.info(message),
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
}

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/** Checks a `logger` option at set-up time; throws `ConfigError` naming what is missing. */
export function checkLogger(logger: unknown, where: string): Logger | undefined {
  if (logger === undefined) return undefined
  const missing =
    typeof logger === 'object' && logger !== null
      ? LEVELS.filter((level) => typeof (logger as Record<string, unknown>)[level] !== 'function')
      : LEVELS
  if (missing.length > 0) {
    throw new ConfigError(
      `${where}: logger must have debug, info, warn and error methods (console, pino and ` +
        `Fastify's logger do); it has no ${missing.join(', ')}.`,
    )
  }
  return logger as Logger
}

/** Calls an app's listener (a hook); one that throws must not change what the toolkit does. */
export function notify<A extends unknown[]>(
  listener: ((...args: A) => unknown) | undefined,
  ...args: A
): void {
  try {
    listener?.(...args)
  } catch {
    // The listener's own failure: nothing to do.
  }
}

/** Calls the logger; a logger that throws must not change an answer. */
export function emit(logger: Logger, level: (typeof LEVELS)[number], message: string): void {
  try {
    logger[level](message)
  } catch {
    // Nothing to do: the logger itself failed.
  }
}

/**
 * An error as a log line: its stack (or message), then each cause's, indented, down to five
 * levels; an `AggregateError`'s errors too.
 */
export function describeError(error: unknown, depth = 0): string {
  const indent = '  '.repeat(depth)
  if (!(error instanceof Error)) return `${indent}${String(error)}`
  const own = (error.stack ?? `${error.name}: ${error.message}`)
    .split('\n')
    .map((line) => indent + line)
    .join('\n')
  if (depth >= 5) return own
  const parts = [own]
  if (error instanceof AggregateError) {
    for (const inner of error.errors) parts.push(describeError(inner, depth + 1))
  }
  if (error.cause !== undefined) {
    parts.push(`${indent}Caused by:`, describeError(error.cause, depth + 1))
  }
  return parts.join('\n')
}

const WINDOW_MS = 60_000

interface Window {
  count: number
  timer: ReturnType<typeof setTimeout>
}

/**
 * Logs the first occurrence of each kind in full, then only a count once a minute while more
 * come, so a sender cannot flood the log: a thousand forged signatures a second give one line
 * a minute.
 */
export class Summarizer {
  readonly #windows = new Map<string, Window>()

  /** Logs `message` now, or counts it when a line of this kind went out in the last minute. */
  note(
    logger: Logger,
    level: (typeof LEVELS)[number],
    kind: string,
    message: string,
    summary: (count: number) => string,
  ): void {
    const open = this.#windows.get(kind)
    if (open !== undefined) {
      open.count++
      return
    }
    emit(logger, level, message)
    this.#start(logger, level, kind, summary)
  }

  #start(
    logger: Logger,
    level: (typeof LEVELS)[number],
    kind: string,
    summary: (count: number) => string,
  ): void {
    const window: Window = {
      count: 0,
      timer: setTimeout(() => {
        this.#windows.delete(kind)
        if (window.count === 0) return
        emit(logger, level, summary(window.count))
        // Keep counting while they keep coming: the next one opens a new window.
        this.#start(logger, level, kind, summary)
      }, WINDOW_MS),
    }
    // A pending summary must not keep a process alive (Node, Bun, Deno; absent elsewhere).
    ;(window.timer as { unref?: () => void }).unref?.()
    this.#windows.set(kind, window)
  }
}

/**
 * Whether pages may name causes: only where a process exists and its `NODE_ENV` says
 * `development` or `test`. Unset or any other value is production, and so is a runtime where
 * there is no process (workerd without nodejs_compat) or it cannot be read (Deno without
 * `--allow-env` throws): a cause can name internal addresses, and only a developer should see it.
 */
export function developmentMode(): boolean {
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
      ?.env
    const mode = env?.NODE_ENV
    return mode === 'development' || mode === 'test'
  } catch {
    return false
  }
}
