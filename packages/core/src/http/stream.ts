import { concat } from '../platform/bytes.js'

/** Resolves like `step`, or rejects with `late()` once `deadline` (a `performance.now()`) passes. */
export function beforeDeadline<T>(
  step: Promise<T>,
  deadline: number,
  late: () => unknown,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, deadline - performance.now()))
  })
  return Promise.race([step, expired]).finally(() => clearTimeout(timer))
}

/** A deadline for reading a whole stream: its length in ms and the error it rejects with. */
export interface StreamDeadline {
  ms: number
  error: () => unknown
}

/**
 * Reads a Web stream into bytes, cancelling it as soon as it passes `limit`: resolves to
 * `undefined` then, never having held more than `limit` bytes and one chunk. With a deadline,
 * rejects with its error (and cancels the stream) when the stream has not ended in time.
 */
export async function readStream(
  stream: ReadableStream<Uint8Array>,
  limit: number,
  deadline?: StreamDeadline,
  /** Told of each chunk before it is kept; throwing cancels the stream and rejects with it. */
  onChunk?: (bytes: number) => void,
): Promise<Uint8Array | undefined> {
  const reader = stream.getReader()
  const end = deadline === undefined ? 0 : performance.now() + deadline.ms
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const read = reader.read()
      const { done, value } = await (deadline ? beforeDeadline(read, end, deadline.error) : read)
      if (done) return concat(chunks, total)
      total += value.length
      if (total > limit) {
        reader.cancel().catch(() => {})
        return undefined
      }
      onChunk?.(value.length)
      chunks.push(value)
    }
  } catch (error) {
    reader.cancel().catch(() => {})
    throw error
  }
}
