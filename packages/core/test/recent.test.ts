import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RecentMap } from '../src/recent.js'
import { OwnerCache, type WebhookOwner } from '../src/subscriptions/lookup.js'

describe('RecentMap', () => {
  it('behaves as a list ordered by last use, cut to its size from the oldest end', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 12 }) }),
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 12 }),
        value: fc.integer(),
      }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 12 }) }),
    )
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 200 }), (size, ops) => {
        const map = new RecentMap<number, number>(size)
        // The model: most recently used last.
        const model: Array<[number, number]> = []
        for (const o of ops) {
          const at = model.findIndex(([k]) => k === o.key)
          if (o.kind === 'get') {
            const got = map.get(o.key)
            if (at === -1) expect(got).toBeUndefined()
            else {
              const [entry] = model.splice(at, 1)
              expect(got).toBe(entry![1])
              model.push(entry!)
            }
          } else if (o.kind === 'set') {
            map.set(o.key, o.value)
            if (at !== -1) model.splice(at, 1)
            if (model.length >= size) model.shift()
            model.push([o.key, o.value])
          } else {
            map.delete(o.key)
            if (at !== -1) model.splice(at, 1)
          }
          expect(map.size).toBe(model.length)
          expect(map.size).toBeLessThanOrEqual(size)
        }
        for (const [k, v] of model) expect(map.get(k)).toBe(v)
      }),
    )
  })

  it('refuses a size that is not a whole number of at least 1', () => {
    for (const size of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new RecentMap(size)).toThrow(/size must be a whole number/)
  })
})

describe('the owners cache past its size', () => {
  it('keeps the webhooks whose deliveries keep coming, forgetting one at a time (no cliff)', async () => {
    let reads = 0
    const cache = new OwnerCache(60_000, () => 0, 100)
    const owner = (id: string): WebhookOwner => ({
      account: `acct_${id}`,
      secret: 's',
      handle: true,
    })
    const lookup = (id: string) =>
      cache.lookup(id, async () => {
        reads++
        return owner(id)
      })
    // 20 hot webhooks delivering between each of 1,000 others seen once: the hot ones are read
    // from the store once each, every other delivery of theirs a hit, answered synchronously.
    for (let i = 0; i < 20; i++) await lookup(`hot_${i}`)
    expect(reads).toBe(20)
    for (let i = 0; i < 1_000; i++) {
      await lookup(`cold_${i}`)
      for (let h = 0; h < 20; h++) expect(lookup(`hot_${h}`)).toEqual(owner(`hot_${h}`))
    }
    expect(reads).toBe(1_020)
    // The cold ones seen longest ago were the ones forgotten; the newest 80 are still kept.
    const before = reads
    for (let i = 920; i < 1_000; i++) expect(lookup(`cold_${i}`)).toEqual(owner(`cold_${i}`))
    expect(reads).toBe(before)
    await lookup('cold_0')
    expect(reads).toBe(before + 1)
  })
})
