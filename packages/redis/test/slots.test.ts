import { ConfigError } from '@scheduling-kit/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { crc16, SLOTS, shardOf, slotOf, spreadOverSlots } from '../src/slots.js'

// The slot arithmetic the ledger's shards rest on; the same slots as a live cluster's
// `CLUSTER KEYSLOT` in cluster-ledger.test.ts.

describe('slots', () => {
  it("crc16 is XMODEM's: '123456789' gives 0x31c3", () => {
    expect(crc16(new TextEncoder().encode('123456789'))).toBe(0x31c3)
  })

  it('a hash tag decides the slot; an empty one does not', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((t) => !t.includes('}')),
        fc.string(),
        fc.string(),
        (tag, a, b) => {
          const key = `${a.replaceAll('{', '')}{${tag}}${b}`
          expect(slotOf(key)).toBe(slotOf(`{${tag}}`))
        },
      ),
    )
    expect(slotOf('a{}b')).toBe(crc16(new TextEncoder().encode('a{}b')) % SLOTS)
  })

  it("each shard's key falls in its own share of the slots, in order", () => {
    fc.assert(
      fc.property(
        fc.string().filter((p) => !p.includes('{') && !p.includes('}')),
        fc.integer({ min: 1, max: 256 }),
        (prefix, count) => {
          const keyOf = (n: number) => `${prefix}ledger:{${prefix}#${n}}:`
          const found = spreadOverSlots(keyOf, count)
          found.forEach((n, shard) => {
            const slot = slotOf(keyOf(n))
            expect(slot).toBeGreaterThanOrEqual(Math.ceil((shard * SLOTS) / count))
            expect(slot).toBeLessThan(Math.ceil(((shard + 1) * SLOTS) / count))
          })
        },
      ),
      { numRuns: 30 },
    )
  })

  it('a key whose number is outside its hash tag: told, not looped on', () => {
    expect(() => spreadOverSlots((n) => `{fixed}:${n}`, 4)).toThrow(ConfigError)
    expect(() => spreadOverSlots((n) => `{fixed}:${n}`, 4)).toThrow(/no key found in slots/)
  })

  it('accounts spread evenly over shards: 100,000 over 64, none over 1.1x its share', () => {
    const counts = new Array<number>(64).fill(0)
    for (let i = 0; i < 100_000; i++) counts[shardOf(`acct_${i}`, 64)]!++
    expect(Math.max(...counts) / (100_000 / 64)).toBeLessThan(1.1)
    expect(shardOf('anything', 1)).toBe(0)
  })
})
