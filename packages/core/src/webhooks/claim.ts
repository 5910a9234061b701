import { sleep } from '../http.js'
import { isThenable } from '../thenable.js'
import type { DedupeStore } from './dedupe.js'

/**
 * Renews `owner`'s claim every `everyMs` while its handlers run, when the store can
 * (`extend`); a failed renewal is left to the next. Returns the stop, to call once they end.
 */
export function keepClaim(
  dedupe: DedupeStore,
  key: string,
  owner: string,
  everyMs: number,
): () => void {
  if (dedupe.extend === undefined) return () => {}
  const timer = setInterval(() => {
    Promise.resolve()
      .then(() => dedupe.extend!(key, owner))
      .catch(() => {})
  }, everyMs)
  ;(timer as { unref?: () => void }).unref?.()
  return () => clearInterval(timer)
}

/**
 * Runs a claim's `complete` or `release` again through a store blip, with backoff, for up to
 * `withinMs`: a claim left `in_progress` holds every retry of its delivery until it lapses.
 * Rejects with the last error after that.
 */
export async function settleClaim(
  call: () => Promise<void> | void,
  withinMs: number,
): Promise<void> {
  const until = performance.now() + withinMs
  for (let pause = 25; ; pause = Math.min(pause * 2, 1_000)) {
    try {
      const result = call()
      if (isThenable(result)) await result
      return
    } catch (error) {
      if (performance.now() + pause >= until) throw error
      await sleep(pause)
    }
  }
}
