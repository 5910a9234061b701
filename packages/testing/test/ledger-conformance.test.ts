import { type LedgerPurge, type LedgerStore, MemoryLedgerStore } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { runLedgerStoreConformance } from '../src/index.js'

runLedgerStoreConformance((o) => new MemoryLedgerStore(o), {
  describe,
  it,
  name: 'MemoryLedgerStore: LedgerStore conformance',
})

// The kit must fail a store that breaks its promises: run its tests by hand against one that
// writes whatever it is given (no compare-and-set) and keeps bodies through a purge's race.
describe('runLedgerStoreConformance against a broken store', () => {
  it('fails a store whose writes ignore the version', async () => {
    const failures: string[] = []
    const tests: Array<[string, () => Promise<void>]> = []
    runLedgerStoreConformance(
      () => {
        const inner = new MemoryLedgerStore()
        const broken: LedgerStore = {
          get: (id) => inner.get(id),
          write: async (e) => {
            const current = await inner.get(e.id)
            return inner.write(e, current?.version)
          },
          list: (f) => inner.list(f),
          mark: (r) => inner.mark(r),
          setMark: (m, v) => inner.setMark(m, v),
          purge: (p) => inner.purge(p),
        }
        return broken
      },
      { describe: (_name, fn) => fn(), it: (name, fn) => void tests.push([name, fn]) },
    )
    for (const [name, fn] of tests) await fn().catch(() => failures.push(name))
    expect(failures).toContain(
      'an entry is written only when absent, then only at its current version',
    )
    expect(failures).toContain(
      "purge drops expired bodies (the entry stays, its version moves on), old entries, and one account's bodies",
    )
  })
})

describe('runLedgerStoreConformance against a store without a body bound', () => {
  it('fails a store whose purge leaves every mark', async () => {
    class KeepsMarks extends MemoryLedgerStore {
      override purge(what: LedgerPurge) {
        const { marksBefore: _ignored, ...rest } = what
        return super.purge(rest)
      }
    }
    const failures: string[] = []
    const tests: Array<[string, () => Promise<void>]> = []
    runLedgerStoreConformance((o) => new KeepsMarks(o), {
      describe: (_name, fn) => fn(),
      it: (name, fn) => void tests.push([name, fn]),
    })
    for (const [name, fn] of tests) await fn().catch(() => failures.push(name))
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatch(/^purge\(\{ marksBefore \}\)/)
  })

  it('fails a store that keeps every body of a flooding account', async () => {
    const failures: string[] = []
    const tests: Array<[string, () => Promise<void>]> = []
    runLedgerStoreConformance(() => new MemoryLedgerStore(), {
      describe: (_name, fn) => fn(),
      it: (name, fn) => void tests.push([name, fn]),
    })
    for (const [name, fn] of tests) await fn().catch(() => failures.push(name))
    // The bound, and the bound under racing first writes.
    expect(failures).toHaveLength(2)
    for (const failure of failures) expect(failure).toMatch(/^maxBodiesPerAccount/)
  })
})
