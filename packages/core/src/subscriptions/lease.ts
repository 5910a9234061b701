import { newOwnerId } from '../claims/owner.js'
import { sleep } from '../sleep.js'
import type { SubscriptionStore } from './store.js'

// An account's lease: one instance at a time works on its webhooks. Taken with backoff up to a
// wait, renewed every third of its time while the work runs, given back at the end.

/** What `withLease` answers when the lease stayed taken for the whole wait. */
export const BUSY = Symbol('busy')

/** Runs `work` holding the account's lease, renewed meanwhile; waits for it up to `waitMs`. */
export async function withLease<T>(
  store: Pick<SubscriptionStore, 'acquireLease' | 'releaseLease'>,
  key: string,
  ttlMs: number,
  waitMs: number,
  work: () => Promise<T>,
): Promise<T | typeof BUSY> {
  const owner = newOwnerId()
  const until = performance.now() + waitMs
  for (let pause = 25; !(await store.acquireLease(key, owner, ttlMs)); ) {
    if (performance.now() + pause > until) return BUSY
    await sleep(pause + Math.floor(Math.random() * pause))
    pause = Math.min(pause * 2, 1_000)
  }
  const timer = setInterval(
    () => {
      store.acquireLease(key, owner, ttlMs).catch(() => {})
    },
    Math.floor(ttlMs / 3),
  )
  ;(timer as { unref?: () => void }).unref?.()
  try {
    return await work()
  } finally {
    clearInterval(timer)
    await store.releaseLease(key, owner).catch(() => {})
  }
}
