// runOnce: the one claim protocol under webhook deliveries, OAuth states and queued jobs.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { runOnce } from '../../src/entries/queue.js'
import { type DedupeStore, MemoryDedupeStore } from '../../src/index.js'

/** The memory store behind promises, so a scheduler can interleave every call. */
function scheduled(store: DedupeStore, schedule: <T>(p: Promise<T>) => Promise<T>): DedupeStore {
  return {
    claim: (key, owner) => schedule(Promise.resolve(store.claim(key, owner))),
    complete: (key, owner) => schedule(Promise.resolve(store.complete(key, owner))),
    release: (key, owner) => schedule(Promise.resolve(store.release(key, owner))),
  }
}

describe('runOnce', () => {
  it('runs the work for one owner; the others are told in_progress, then completed', async () => {
    const store = new MemoryDedupeStore()
    let runs = 0
    let finish!: () => void
    const first = runOnce({ store, key: 'k' }, () => {
      runs++
      return new Promise<string>((resolve) => {
        finish = () => resolve('done')
      })
    })
    expect(await runOnce({ store, key: 'k' }, () => runs++)).toEqual({
      ran: false,
      claim: 'in_progress',
    })
    finish()
    expect(await first).toEqual({ ran: true, value: 'done' })
    expect(await runOnce({ store, key: 'k' }, () => runs++)).toEqual({
      ran: false,
      claim: 'completed',
    })
    expect(runs).toBe(1)
  })

  it('releases the claim when the work throws, so the next caller runs it', async () => {
    const store = new MemoryDedupeStore()
    await expect(
      runOnce({ store, key: 'k' }, () => {
        throw new Error('handler down')
      }),
    ).rejects.toThrow('handler down')
    expect(await runOnce({ store, key: 'k' }, async () => 'second')).toEqual({
      ran: true,
      value: 'second',
    })
  })

  it('tries a failing complete again within settleMs; then throws, or lets the claim lapse', async () => {
    const memory = new MemoryDedupeStore()
    let failures = 2
    const flaky: DedupeStore = {
      claim: (key, owner) => memory.claim(key, owner),
      release: (key, owner) => memory.release(key, owner),
      complete: async (key, owner) => {
        if (failures-- > 0) throw new Error('store blip')
        memory.complete(key, owner)
      },
    }
    expect(await runOnce({ store: flaky, key: 'a', settleMs: 60_000 }, () => 1)).toEqual({
      ran: true,
      value: 1,
    })
    expect(memory.claim('a', 'other')).toBe('completed')
    const down: DedupeStore = { ...flaky, complete: async () => Promise.reject(new Error('down')) }
    await expect(runOnce({ store: down, key: 'b' }, () => 2)).rejects.toThrow('down')
    expect(await runOnce({ store: down, key: 'c', onCompleteFailure: 'ignore' }, () => 3)).toEqual({
      ran: true,
      value: 3,
    })
  })

  it('property: whatever the interleaving, the work of a key runs once per success, never twice at a time', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(fc.boolean(), { minLength: 2, maxLength: 6 }),
        async (s, fails) => {
          const store = scheduled(new MemoryDedupeStore(), (p) => s.schedule(p))
          let running = 0
          let overlapped = false
          let succeeded = 0
          const calls = fails.map((fail) =>
            Promise.resolve(
              runOnce({ store, key: 'k' }, async () => {
                running++
                if (running > 1) overlapped = true
                await s.schedule(Promise.resolve())
                running--
                if (fail) throw new Error('failed')
                succeeded++
              }),
            ).catch(() => ({ ran: false as const, claim: 'failed' as const })),
          )
          const outcomes = await s.waitFor(Promise.all(calls))
          expect(overlapped).toBe(false)
          expect(succeeded).toBeLessThanOrEqual(1)
          expect(outcomes.filter((o) => o.ran).length).toBe(succeeded)
        },
      ),
      { numRuns: 200 },
    )
  })
})
