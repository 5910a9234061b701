import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ConfigError, isRetryStore, type RetryStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'

// The battery a `RetryStore` must pass (the held tries of periodic work that failed for one
// account): a try held, read and dropped exactly, keys kept apart however alike; taken only
// when due, the earliest first, at most the limit, under a lease that keeps it from another
// taker and brings it back when it lapses; of racing takers, each try goes to one.

/** Keys a store must keep apart: lone surrogates, the characters of key syntaxes, a long one. */
const ALIKE = ['a\ud800', 'a\udc00', 'a', 'a:', 'a{', 'a}', '{a}', 'a'.repeat(600), 'a'.repeat(601)]

/**
 * Runs the retry store battery. `createStore` gives a store over private or empty tasks: the
 * kit's task names are drawn at random.
 *
 * @example
 * ```ts
 * runRetryStoreConformance(() => new MySweepStore(db), { describe, it })
 * ```
 */
export function runRetryStoreConformance(
  createStore: () => RetryStore | Promise<RetryStore>,
  options: StoreConformanceOptions,
): void {
  if (typeof options?.describe !== 'function' || typeof options.it !== 'function')
    throw new ConfigError('runRetryStoreConformance: pass { describe, it } from your test runner.')
  const { describe, it } = options
  const task = () => `task_${randomBytes(6).toString('hex')}`
  const store = async () => {
    const made = await createStore()
    assert.ok(isRetryStore(made), 'the store has holdRetry, heldRetry, takeRetries and dropRetry')
    return made
  }
  describe(options.name ?? 'RetryStore conformance', () => {
    it('a try held, read back exactly, replaced by the next hold, dropped; keys that differ only in lone surrogates, :, {, } or length kept apart', async () => {
      const s = await store()
      const name = task()
      assert.equal(await s.heldRetry(name, 'a'), undefined)
      for (const [i, key] of ALIKE.entries()) await s.holdRetry(name, key, 1_000 + i, i + 1)
      for (const [i, key] of ALIKE.entries())
        assert.deepEqual(await s.heldRetry(name, key), { at: 1_000 + i, failures: i + 1 }, key)
      assert.equal(await s.heldRetry(task(), 'a'), undefined, 'tasks kept apart')
      await s.holdRetry(name, 'a', 1_893_456_000_123, 7)
      assert.deepEqual(await s.heldRetry(name, 'a'), { at: 1_893_456_000_123, failures: 7 })
      await s.dropRetry(name, 'a\ud800')
      assert.equal(await s.heldRetry(name, 'a\ud800'), undefined)
      assert.deepEqual(await s.heldRetry(name, 'a\udc00'), { at: 1_001, failures: 2 })
      await s.dropRetry(name, 'never held')
    })

    it('taken when due only, the earliest first, at most the limit, each key as it was held', async () => {
      const s = await store()
      const name = task()
      for (const [i, key] of ALIKE.entries()) await s.holdRetry(name, key, 10_000 - i, 3)
      await s.holdRetry(name, 'later', 50_000, 1)
      const first = await s.takeRetries(name, 20_000, 4, 60_000)
      assert.deepEqual(
        first,
        [...ALIKE]
          .reverse()
          .slice(0, 4)
          .map((key) => ({ key, failures: 3 })),
      )
      const rest = await s.takeRetries(name, 20_000, 100, 60_000)
      assert.deepEqual(
        rest.map((t) => t.key).sort(),
        [...ALIKE].reverse().slice(4).sort(),
        'the others, not the taken ones nor the one not due',
      )
      assert.deepEqual(await s.takeRetries(name, 20_000, 100, 60_000), [])
    })

    it("a taken try is leased: no other taker gets it until the lease's end, then it comes due again unless held or dropped meanwhile", async () => {
      const s = await store()
      const name = task()
      await s.holdRetry(name, 'k1', 1_000, 1)
      await s.holdRetry(name, 'k2', 1_000, 2)
      await s.holdRetry(name, 'k3', 1_000, 1)
      assert.equal((await s.takeRetries(name, 2_000, 10, 5_000)).length, 3)
      assert.deepEqual(await s.takeRetries(name, 6_999, 10, 5_000), [])
      await s.holdRetry(name, 'k1', 100_000, 2) // its taker failed again: held further
      await s.dropRetry(name, 'k3') // its taker's try worked
      // k2's taker died: back once the lease is over, its failures kept.
      assert.deepEqual(await s.takeRetries(name, 7_000, 10, 5_000), [{ key: 'k2', failures: 2 }])
    })

    it('of 8 takers racing over 40 due tries, each try goes to exactly one', async () => {
      const s = await store()
      const name = task()
      for (let i = 0; i < 40; i++) await s.holdRetry(name, `k${i}`, 1_000 + i, 1)
      const taken = await Promise.all(
        Array.from({ length: 8 }, () => s.takeRetries(name, 5_000, 10, 60_000)),
      )
      const keys = taken.flat().map((t) => t.key)
      assert.equal(keys.length, 40)
      assert.equal(new Set(keys).size, 40)
    })
  })
}
