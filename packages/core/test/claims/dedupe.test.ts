import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'

describe('MemoryDedupeStore', () => {
  it('claims once, reports in-progress, then completed, and frees a released key', () => {
    const store = new MemoryDedupeStore()
    expect(store.claim('a', 'o1')).toBe('claimed')
    expect(store.claim('a', 'o2')).toBe('in_progress')
    store.complete('a', 'o1')
    expect(store.claim('a', 'o3')).toBe('completed')
    expect(store.claim('b', 'o1')).toBe('claimed')
    store.release('b', 'o1')
    expect(store.claim('b', 'o2')).toBe('claimed')
  })

  it('lets a claim lapse after its lease, and forgets completed keys after the ttl', () => {
    let now = 1_000
    const store = new MemoryDedupeStore({ leaseMs: 100, ttlMs: 1_000, now: () => now })
    store.claim('crashed', 'dead')
    now += 99
    expect(store.claim('crashed', 'next')).toBe('in_progress')
    now += 2
    expect(store.claim('crashed', 'next')).toBe('claimed')
    store.complete('crashed', 'next')
    now += 999
    expect(store.claim('crashed', 'late')).toBe('completed')
    now += 2
    expect(store.claim('crashed', 'late')).toBe('claimed')
  })

  it('a holder whose claim lapsed and was taken can neither free nor finish the new claim', () => {
    let now = 0
    const store = new MemoryDedupeStore({ leaseMs: 100, now: () => now })
    expect(store.claim('k', 'slow')).toBe('claimed')
    now = 150
    expect(store.claim('k', 'retry')).toBe('claimed')
    store.release('k', 'slow')
    expect(store.claim('k', 'third')).toBe('in_progress')
    store.complete('k', 'slow')
    store.release('k', 'retry')
    expect(store.claim('k', 'third'), 'the retry released its own claim').toBe('claimed')
    store.complete('k', 'third')
    store.release('k', 'third')
    expect(store.claim('k', 'fourth'), 'release does not undo a completion').toBe('completed')
  })

  it('stays within maxEntries, dropping the oldest first', () => {
    const store = new MemoryDedupeStore({ maxEntries: 100 })
    for (let i = 0; i < 1_000; i++) {
      store.claim(`k${i}`, 'o')
      store.complete(`k${i}`, 'o')
    }
    expect(store.size).toBe(100)
    expect(store.claim('k999', 'o')).toBe('completed')
    expect(store.claim('k0', 'o')).toBe('claimed')
  })

  it('drops expired entries as new ones come in', () => {
    let now = 0
    const store = new MemoryDedupeStore({ ttlMs: 10, now: () => now })
    for (let i = 0; i < 50; i++) store.complete(`k${i}`, 'o')
    now = 100
    store.complete('fresh', 'o')
    expect(store.size).toBe(1)
  })
})

/** The same policy, written the slow obvious way: an array in order of last claim. */
class ModelStore {
  order: string[] = []
  map = new Map<string, { state: 'in_progress' | 'completed'; owner: string; exp: number }>()
  constructor(
    readonly max: number,
    readonly ttl: number,
    readonly lease: number,
    readonly now: () => number,
  ) {}
  claim(key: string, owner: string) {
    const e = this.map.get(key)
    if (e && e.exp > this.now()) return e.state
    this.put(key, 'in_progress', owner, this.now() + this.lease)
    return 'claimed'
  }
  complete(key: string, owner: string) {
    const e = this.map.get(key)
    if (!e || e.exp <= this.now()) this.put(key, 'completed', owner, this.now() + this.ttl)
    else if (e.owner === owner) {
      e.state = 'completed'
      e.exp = this.now() + this.ttl
    }
  }
  release(key: string, owner: string) {
    const e = this.map.get(key)
    if (e?.owner !== owner || e.state !== 'in_progress') return
    this.map.delete(key)
    this.order = this.order.filter((k) => k !== key)
  }
  put(key: string, state: 'in_progress' | 'completed', owner: string, exp: number) {
    this.order = this.order.filter((k) => k !== key)
    this.order.push(key)
    this.map.set(key, { state, owner, exp })
    while (this.order.length > 0) {
      const head = this.map.get(this.order[0]!)!
      if (head.exp > this.now() && this.map.size <= this.max) break
      this.map.delete(this.order.shift()!)
    }
  }
}

describe('MemoryDedupeStore against a model', () => {
  it('property: every answer and the size match the obvious implementation, and it never exceeds maxEntries', () => {
    const op = fc.oneof(
      fc.record({
        op: fc.constant('claim' as const),
        key: fc.nat({ max: 12 }),
        owner: fc.nat({ max: 2 }),
      }),
      fc.record({
        op: fc.constant('complete' as const),
        key: fc.nat({ max: 12 }),
        owner: fc.nat({ max: 2 }),
      }),
      fc.record({
        op: fc.constant('release' as const),
        key: fc.nat({ max: 12 }),
        owner: fc.nat({ max: 2 }),
      }),
      fc.record({
        op: fc.constant('tick' as const),
        key: fc.nat({ max: 30 }),
        owner: fc.constant(0),
      }),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.integer({ min: 1, max: 8 }), (ops, max) => {
        let now = 0
        const clock = () => now
        const store = new MemoryDedupeStore({ maxEntries: max, ttlMs: 50, leaseMs: 10, now: clock })
        const model = new ModelStore(max, 50, 10, clock)
        for (const { op, key, owner } of ops) {
          if (op === 'tick') {
            now += key
            continue
          }
          const k = `k${key}`
          const o = `o${owner}`
          if (op === 'claim') expect(store.claim(k, o)).toBe(model.claim(k, o))
          else {
            store[op](k, o)
            model[op](k, o)
          }
          expect(store.size).toBe(model.map.size)
          expect(store.size).toBeLessThanOrEqual(max)
        }
      }),
      { numRuns: 500 },
    )
  })

  it('keeps working through heavy release churn behind a long-lived head (the queue is compacted)', () => {
    const store = new MemoryDedupeStore({ maxEntries: 10 })
    store.claim('head', 'o')
    store.complete('head', 'o')
    for (let i = 0; i < 50_000; i++) {
      store.claim('retry', `o${i}`)
      store.release('retry', `o${i}`)
    }
    expect(store.claim('head', 'o')).toBe('completed')
    expect(store.size).toBe(1)
  })

  it('tells listeners when keys are dropped before they expire, and not when they expired', () => {
    let now = 0
    const store = new MemoryDedupeStore({ maxEntries: 3, ttlMs: 100, now: () => now })
    const early: number[] = []
    store.onEarlyEviction((e) => void early.push(e.count))
    for (const k of ['a', 'b', 'c']) {
      store.claim(k, 'o')
      store.complete(k, 'o')
    }
    expect(early).toEqual([])
    store.claim('d', 'o')
    expect(early).toEqual([1])
    now = 1000
    store.claim('e', 'o')
    expect(early).toEqual([1])
  })
})
