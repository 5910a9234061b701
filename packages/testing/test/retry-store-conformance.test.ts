import { MemorySweepStore, type RetryStore } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { runRetryStoreConformance } from '../src/index.js'

runRetryStoreConformance(() => new MemorySweepStore(), {
  describe,
  it,
  name: 'MemorySweepStore: RetryStore conformance',
})

// The kit must fail a store that breaks its promises: its tests run by hand against a store
// that takes without a lease, one that folds keys (a lone surrogate written as U+FFFD, as a
// UTF-8 driver does), and one that takes in the order the tries were held.
describe('runRetryStoreConformance against broken stores', () => {
  const failuresOf = async (create: () => RetryStore) => {
    const tests: Array<[string, () => Promise<void>]> = []
    runRetryStoreConformance(create, {
      describe: (_name, fn) => fn(),
      it: (name, fn) => void tests.push([name, fn]),
    })
    const failed: string[] = []
    for (const [name, fn] of tests) await fn().catch(() => failed.push(name))
    return failed
  }
  const wrap = (overrides: (inner: MemorySweepStore) => Partial<RetryStore>) => () => {
    const inner = new MemorySweepStore()
    return {
      holdRetry: inner.holdRetry.bind(inner),
      heldRetry: inner.heldRetry.bind(inner),
      takeRetries: inner.takeRetries.bind(inner),
      dropRetry: inner.dropRetry.bind(inner),
      ...overrides(inner),
    }
  }

  it('fails a store that takes without a lease', async () => {
    const failed = await failuresOf(
      wrap((inner) => ({
        takeRetries: async (name, now, limit) => {
          const taken = await inner.takeRetries(name, now, limit, 0)
          return taken
        },
      })),
    )
    expect(failed).toContain(
      "a taken try is leased: no other taker gets it until the lease's end, then it comes due again unless held or dropped meanwhile",
    )
    expect(failed).toContain('of 8 takers racing over 40 due tries, each try goes to exactly one')
  })

  it('fails a store that folds lone surrogates into U+FFFD', async () => {
    // As a UTF-8 driver writes it (the kit's keys hold no surrogate pairs).
    const fold = (key: string) => key.replace(/[\ud800-\udfff]/g, '\ufffd')
    const failed = await failuresOf(
      wrap((inner) => ({
        holdRetry: (name, key, at, failures) => inner.holdRetry(name, fold(key), at, failures),
        heldRetry: (name, key) => inner.heldRetry(name, fold(key)),
        dropRetry: (name, key) => inner.dropRetry(name, fold(key)),
      })),
    )
    expect(failed).toContain(
      'a try held, read back exactly, replaced by the next hold, dropped; keys that differ only in lone surrogates, :, {, } or length kept apart',
    )
  })

  it('fails a store that takes in the order held, not by time', async () => {
    const failed = await failuresOf(
      wrap((inner) => {
        const order: string[] = []
        return {
          holdRetry: async (name, key, at, failures) => {
            order.push(key)
            await inner.holdRetry(name, key, at, failures)
          },
          takeRetries: async (name, now, limit, leaseMs) => {
            const due = await inner.takeRetries(name, now, Number.MAX_SAFE_INTEGER, leaseMs)
            due.sort((a, b) => order.indexOf(a.key) - order.indexOf(b.key))
            for (const t of due.slice(limit)) await inner.holdRetry(name, t.key, 0, t.failures)
            return due.slice(0, limit)
          },
        }
      }),
    )
    expect(failed).toContain(
      'taken when due only, the earliest first, at most the limit, each key as it was held',
    )
  })
})
