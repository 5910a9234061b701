import { MemoryDedupeStore } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { runDedupeStoreConformance } from '../src/index.js'

runDedupeStoreConformance((timing) => new MemoryDedupeStore(timing), {
  describe,
  it,
  name: 'MemoryDedupeStore: DedupeStore conformance',
})

// The kit must fail a store that breaks its promises: run its tests by hand against one that
// lets anyone release a claim (the interface before claims had owners).
describe('runDedupeStoreConformance against a broken store', () => {
  it('fails a store whose release ignores the owner', async () => {
    const failures: string[] = []
    const tests: Array<[string, () => Promise<void>]> = []
    runDedupeStoreConformance(
      (timing) => {
        const keys = new Map<string, { state: 'in_progress' | 'completed'; until: number }>()
        return {
          claim: (k) => {
            const entry = keys.get(k)
            if (entry && entry.until > Date.now()) return entry.state
            keys.set(k, { state: 'in_progress', until: Date.now() + timing.leaseMs })
            return 'claimed'
          },
          complete: (k) =>
            void keys.set(k, { state: 'completed', until: Date.now() + timing.ttlMs }),
          release: (k) => void keys.delete(k),
        }
      },
      { describe: (_name, fn) => fn(), it: (name, fn) => void tests.push([name, fn]) },
    )
    for (const [name, fn] of tests) {
      await fn().catch(() => failures.push(name))
    }
    expect(failures).toContain(
      'release by the holder frees the key; release by another owner does not',
    )
    expect(failures.length).toBeGreaterThanOrEqual(2)
  }, 180_000)
})
