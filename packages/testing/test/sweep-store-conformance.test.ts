import { MemorySweepStore, type SweepStore } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { runSweepStoreConformance } from '../src/index.js'

runSweepStoreConformance(() => new MemorySweepStore(), {
  describe,
  it,
  name: 'MemorySweepStore: SweepStore conformance',
})

// The kit must fail a store that breaks its promises: its tests run by hand against a store
// whose checkpoint writes ignore the version, and one whose leases ignore their owner.
describe('runSweepStoreConformance against broken stores', () => {
  const failuresOf = async (create: () => SweepStore) => {
    const tests: Array<[string, () => Promise<void>]> = []
    runSweepStoreConformance(create, {
      describe: (_name, fn) => fn(),
      it: (name, fn) => void tests.push([name, fn]),
    })
    const failed: string[] = []
    for (const [name, fn] of tests) await fn().catch(() => failed.push(name))
    return failed
  }

  it('fails a store whose checkpoint writes ignore the version', async () => {
    const failed = await failuresOf(() => {
      const inner = new MemorySweepStore()
      return Object.assign(Object.create(inner) as SweepStore, {
        acquireLease: inner.acquireLease.bind(inner),
        releaseLease: inner.releaseLease.bind(inner),
        checkpoint: inner.checkpoint.bind(inner),
        setCheckpoint: async (name: string, through: number) => {
          const found = await inner.checkpoint(name)
          return inner.setCheckpoint(name, through, found?.version)
        },
      })
    })
    expect(failed).toContain(
      'a checkpoint: absent until set (a lease alone sets none), moved only from the version read, kept exactly',
    )
  })

  it('fails a store whose leases go to whoever asks', async () => {
    const failed = await failuresOf(() => {
      const inner = new MemorySweepStore()
      return Object.assign(Object.create(inner) as SweepStore, {
        acquireLease: async () => true,
        releaseLease: inner.releaseLease.bind(inner),
        checkpoint: inner.checkpoint.bind(inner),
        setCheckpoint: inner.setCheckpoint.bind(inner),
      })
    })
    expect(failed).toContain(
      "a shard's lease: taken when free, refused to another owner, renewed by its owner, released by its owner only",
    )
    expect(failed).toContain('of 20 owners racing for one free lease, one holds it')
  })
})
