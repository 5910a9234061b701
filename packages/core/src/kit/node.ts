import { utf8Length } from '../platform/bytes.js'

/** What the kit writes to a Node response. */
export interface NodeResponse {
  writeHead(status: number, headers: Record<string, string | string[]>): { end(body: string): void }
}

/**
 * Writes an answer to a Node response whole (with its length given, Node sends it in one piece
 * rather than chunked), or calls `next()` when there is none (the request is not core's). An
 * error while writing (a broken socket, headers already sent) goes to `next(error)`.
 */
export function writeNode(
  response: NodeResponse,
  answer: { status: number; headers: Record<string, string | string[]>; body: string } | undefined,
  next: (error?: unknown) => void,
): void {
  if (answer === undefined) {
    next()
    return
  }
  try {
    const headers = answer.headers
    // Core's webhook answers state their length; OAuth pages and redirects are measured here.
    headers['content-length'] ??= String(utf8Length(answer.body))
    response.writeHead(answer.status, headers).end(answer.body)
  } catch (error) {
    next(error)
  }
}

/** The options object of a `(secretOrOptions, options?)` factory, wherever it was given. */
export function optionsOf<T extends object>(
  secretOrOptions: unknown,
  options: T | undefined,
): Partial<T> {
  return (options ??
    (typeof secretOrOptions === 'object' ? secretOrOptions : undefined) ??
    {}) as Partial<T>
}

/**
 * The error of an answer the framework's own error path should take (a handler threw: 500; the
 * queue refused: 503), for an adapter that hands server errors on rather than answering them.
 */
export function serverErrorOf(
  answer: { status: number; error?: Error } | undefined,
): Error | undefined {
  return answer?.error !== undefined && answer.status >= 500 ? answer.error : undefined
}
