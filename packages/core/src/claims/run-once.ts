import { sleep } from '../sleep.js'
import { isThenable } from '../thenable.js'
import type { ClaimResult, DedupeStore } from './dedupe.js'
import { newOwnerId } from './owner.js'

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

/** What `runOnce` came to. */
export type RunOnceOutcome<T> =
  /** This caller held the claim and ran the work: its result. */
  | { ran: true; value: T }
  /** The key was completed already: the work was not run. */
  | { ran: false; claim: 'completed' }
  /** Another owner holds the key's claim: the work was not run. */
  | { ran: false; claim: 'in_progress' }

export interface RunOnceOptions {
  /** Where the claims live. */
  store: DedupeStore
  key: string
  /** The claim's owner. Default a fresh random one. */
  owner?: string
  /** Renews the claim this often while the work runs, when the store can (`extend`). */
  renewMs?: number
  /** How long a failed `complete` or `release` is tried again through a store blip. Default 0. */
  settleMs?: number
  /** When `complete` keeps failing: `'throw'` (default) its error, or `'ignore'` (the claim lapses). */
  onCompleteFailure?: 'throw' | 'ignore'
}

/**
 * The one claim protocol, for webhook deliveries, OAuth sign-in states and queued jobs alike:
 * claim `key`, run `work` while the claim is renewed, then mark it completed; when the work
 * throws, release the claim (so a retry can run it) and rethrow. A key completed already, or
 * claimed by another owner, runs nothing and says which. Synchronous when the store and the
 * work are: a promise only where something is asynchronous.
 */
export function runOnce<T>(
  options: RunOnceOptions,
  work: () => T | Promise<T>,
): RunOnceOutcome<T> | Promise<RunOnceOutcome<T>> {
  const { store, key } = options
  const owner = options.owner ?? newOwnerId()
  const settleMs = options.settleMs ?? 0
  let stopRenewing: (() => void) | undefined

  const failed = (error: unknown): Promise<never> => {
    stopRenewing?.()
    // The work's failure is the answer; a release the store keeps refusing only delays the
    // retry until the claim lapses.
    return settleClaim(() => store.release(key, owner), settleMs).then(
      () => Promise.reject(error),
      () => Promise.reject(error),
    )
  }
  const finish = (value: T): RunOnceOutcome<T> | Promise<RunOnceOutcome<T>> => {
    stopRenewing?.()
    let completed: Promise<void> | void
    try {
      completed = store.complete(key, owner)
    } catch (error) {
      completed = Promise.reject(error)
    }
    if (!isThenable(completed)) return { ran: true, value }
    const settled = Promise.resolve(completed).then(undefined, () =>
      settleClaim(() => store.complete(key, owner), settleMs),
    )
    const done = options.onCompleteFailure === 'ignore' ? settled.catch(() => {}) : settled
    return done.then(() => ({ ran: true as const, value }))
  }
  const run = (claim: ClaimResult): RunOnceOutcome<T> | Promise<RunOnceOutcome<T>> => {
    if (claim !== 'claimed') return { ran: false, claim }
    if (options.renewMs !== undefined) stopRenewing = keepClaim(store, key, owner, options.renewMs)
    let result: T | Promise<T>
    try {
      result = work()
    } catch (error) {
      return failed(error)
    }
    return isThenable(result) ? Promise.resolve(result).then(finish, failed) : finish(result)
  }
  const claimed = store.claim(key, owner)
  return isThenable(claimed) ? Promise.resolve(claimed).then(run) : run(claimed)
}
