import type {
  OAuthRoutesOptions,
  WebhookHandlerOptions,
  WebhookRegistration,
} from '@scheduling-kit/core'

/**
 * Where the app's own JSON body parser runs, relative to the webhooks middleware:
 * - `before`: a parser that keeps no raw copy, mounted globally first;
 * - `before-raw`: the same, keeping the raw bytes the framework's usual way;
 * - `text-before`: a text parser for JSON, mounted globally first;
 * - `after`: the middleware first, the parser after it.
 */
export type ParserPlacement = 'before' | 'before-raw' | 'text-before' | 'after'

/** What the app under test is built from. */
export interface AppSetup {
  webhooks: WebhookHandlerOptions
  /** Registers handlers on the middleware the adapter returned (`.on()`), when it has one. */
  configure?: (webhooks: WebhookRegistration<unknown>) => void
  /** Mount the webhooks middleware under this prefix (`''`: at the root). */
  prefix: string
  parser: ParserPlacement
  /** Options for the OAuth router, mounted at `/auth/scheduling`. */
  oauth: OAuthRoutesOptions
  /**
   * Where the app's framework-level error handler records the message of every error it
   * receives (Express error middleware, Koa's `error` event, Fastify's `setErrorHandler`,
   * h3's `onError`), answering 500 itself.
   */
  frameworkErrors: string[]
  /**
   * Where the harness puts every line the framework's own logger printed: Fastify's logger
   * (the `msg` of each JSON line), Koa's `error` event (the error's `stack`) and console; on
   * Express and h3, which have no logger of their own, console (see `captureConsole`).
   */
  logged: string[]
}

/**
 * Sends `console.info`, `console.warn` and `console.error` into `logged` until the returned
 * function is called: what the developer would see in the terminal.
 */
export function captureConsole(logged: string[]): () => void {
  const original = { info: console.info, warn: console.warn, error: console.error }
  for (const level of ['info', 'warn', 'error'] as const) {
    console[level] = (...args: unknown[]) =>
      void logged.push(args.map((a) => (a instanceof Error ? a.stack : String(a))).join(' '))
  }
  return () => Object.assign(console, original)
}

/** The header that makes writing the answer to a request fail: see `failWritesWhenAsked`. */
export const FAIL_WRITE_HEADER = 'x-test-fail-write'

/**
 * For a request carrying `FAIL_WRITE_HEADER`, makes the first `writeHead` of its Node response
 * throw `write failed`, as writing to a socket that broke would; later calls write normally.
 * Each harness calls it first thing on every request, the framework's way.
 */
export function failWritesWhenAsked(
  headers: Record<string, string | string[] | undefined>,
  res: { writeHead: (...args: never[]) => unknown },
): void {
  if (headers[FAIL_WRITE_HEADER] === undefined) return
  const original = res.writeHead
  res.writeHead = (() => {
    res.writeHead = original
    throw new Error('write failed')
  }) as typeof res.writeHead
}

/**
 * One framework, as the suite needs it. `start` serves, on `port` of 127.0.0.1 with the
 * framework's real server, an app that has:
 * - its own JSON body parser, placed as `setup.parser` says;
 * - `GET /app/ping` answering `{ "pong": true }`;
 * - `POST /app/echo` answering `{ "echo": <the parsed JSON body> }`;
 * - the webhooks middleware with `setup.webhooks` (under `setup.prefix`), `setup.configure`
 *   applied to it;
 * - the OAuth router with `setup.oauth`, at `/auth/scheduling`;
 * - first of all, `failWritesWhenAsked` on every request, and last, an error handler that
 *   records into `setup.frameworkErrors`;
 * - the framework's own 404 for everything else.
 */
export interface AdapterHarness {
  name: string
  /** The placements this framework has. */
  parsers: ParserPlacement[]
  /**
   * The placements in which the app's parser reads the body before the middleware does: there
   * it answers what it refuses itself (documented), and decodes what it reads.
   */
  parserFirst: ParserPlacement[]
  /**
   * With a parser `before` that keeps no raw copy: does the adapter still get the bytes
   * (`raw`), or only the parsed value, verified by its compact serialization (`serialized`)?
   */
  parsedBefore: 'raw' | 'serialized'
  /** Whether handlers can be added with `.on()` on what the adapter returns. */
  configurable: boolean
  /**
   * Who writes the answer on the socket: the framework, through the adapter (Express, Koa,
   * Fastify), or the server after the framework returned a `Response` (h3 on Node: srvx, which
   * reports its own write failures and closes the connection).
   */
  answerWrittenBy: 'framework' | 'server'
  start(port: number, setup: AppSetup): Promise<{ close(): Promise<void> }>
}
