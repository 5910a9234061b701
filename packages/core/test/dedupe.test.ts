import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryDedupeStore } from '../src/webhooks/dedupe.js'

describe('MemoryDedupeStore', () => {
  it('claims once, reports in-progress, then completed, and frees a released key', () => {
    const store = new MemoryDedupeStore()
    expect(store.claim('a')).toBe('claimed')
    expect(store.claim('a')).toBe('in_progress')
    store.complete('a')
    expect(store.claim('a')).toBe('completed')
    expect(store.claim('b')).toBe('claimed')
    store.release('b')
    expect(store.claim('b')).toBe('claimed')
  })

  it('lets a claim lapse after its lease, and forgets completed keys after the ttl', () => {
    let now = 1_000
    const store = new MemoryDedupeStore({ leaseMs: 100, ttlMs: 1_000, now: () => now })
    store.claim('crashed')
    now += 99
    expect(store.claim('crashed')).toBe('in_progress')
    now += 2
    expect(store.claim('crashed')).toBe('claimed')
    store.complete('crashed')
    now += 999
    expect(store.claim('crashed')).toBe('completed')
    now += 2
    expect(store.claim('crashed')).toBe('claimed')
  })

  it('stays within maxEntries, dropping the oldest first', () => {
    const store = new MemoryDedupeStore({ maxEntries: 100 })
    for (let i = 0; i < 1_000; i++) {
      store.claim(`k${i}`)
      store.complete(`k${i}`)
    }
    expect(store.size).toBe(100)
    expect(store.claim('k999')).toBe('completed')
    expect(store.claim('k0')).toBe('claimed')
  })

  it('drops expired entries as new ones come in', () => {
    let now = 0
    const store = new MemoryDedupeStore({ ttlMs: 10, now: () => now })
    for (let i = 0; i < 50; i++) store.complete(`k${i}`)
    now = 100
    store.complete('fresh')
    expect(store.size).toBe(1)
  })
})

/** The same policy, written the slow obvious way: an array in order of last claim. */
class ModelStore {
  order: string[] = []
  map = new Map<string, { state: 'in_progress' | 'completed'; exp: number }>()
  constructor(
    readonly max: number,
    readonly ttl: number,
    readonly lease: number,
    readonly now: () => number,
  ) {}
  claim(key: string) {
    const e = this.map.get(key)
    if (e && e.exp > this.now()) return e.state
    this.put(key, 'in_progress', this.now() + this.lease)
    return 'claimed'
  }
  complete(key: string) {
    const e = this.map.get(key)
    if (e) {
      e.state = 'completed'
      e.exp = this.now() + this.ttl
    } else this.put(key, 'completed', this.now() + this.ttl)
  }
  release(key: string) {
    this.map.delete(key)
    this.order = this.order.filter((k) => k !== key)
  }
  put(key: string, state: 'in_progress' | 'completed', exp: number) {
    this.order = this.order.filter((k) => k !== key)
    this.order.push(key)
    this.map.set(key, { state, exp })
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
      fc.record({ op: fc.constant('claim' as const), key: fc.nat({ max: 12 }) }),
      fc.record({ op: fc.constant('complete' as const), key: fc.nat({ max: 12 }) }),
      fc.record({ op: fc.constant('release' as const), key: fc.nat({ max: 12 }) }),
      fc.record({ op: fc.constant('tick' as const), key: fc.nat({ max: 30 }) }),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), fc.integer({ min: 1, max: 8 }), (ops, max) => {
        let now = 0
        const clock = () => now
        const store = new MemoryDedupeStore({ maxEntries: max, ttlMs: 50, leaseMs: 10, now: clock })
        const model = new ModelStore(max, 50, 10, clock)
        for (const { op, key } of ops) {
          if (op === 'tick') {
            now += key
            continue
          }
          const k = `k${key}`
          if (op === 'claim') expect(store.claim(k)).toBe(model.claim(k))
          else {
            store[op](k)
            model[op](k)
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
    store.claim('head')
    store.complete('head')
    for (let i = 0; i < 50_000; i++) {
      store.claim('retry')
      store.release('retry')
    }
    expect(store.claim('head')).toBe('completed')
    expect(store.size).toBe(1)
  })

  it('tells listeners when keys are dropped before they expire, and not when they expired', () => {
    let now = 0
    const store = new MemoryDedupeStore({ maxEntries: 3, ttlMs: 100, now: () => now })
    const early: number[] = []
    store.onEarlyEviction((e) => void early.push(e.count))
    for (const k of ['a', 'b', 'c']) {
      store.claim(k)
      store.complete(k)
    }
    expect(early).toEqual([])
    store.claim('d')
    expect(early).toEqual([1])
    now = 1000
    store.claim('e')
    expect(early).toEqual([1])
  })
})
