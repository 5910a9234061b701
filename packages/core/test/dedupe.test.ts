import { describe, expect, it } from 'vitest'
import { MemoryDedupeStore } from '../src/dedupe.js'

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
