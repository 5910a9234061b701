// The subscription store's index by sweep phase: a window's keys read from the index alone
// (commands follow the accounts due, not the accounts stored), records an older version wrote
// found by the scan a step runs when the index is not complete, and no interleaving of a
// delete and a new record under the same key that leaves a live record out of the index.
import type { PhaseRange, SubscriptionRecord } from '@scheduling-kit/core'
import { inPhases, PHASES, phaseOf } from '@scheduling-kit/core/store'
import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { RedisSubscriptionStore } from '../src/index.js'
import { HEAL_MS, PhaseIndex } from '../src/phase-index.js'
import { redis, uniquePrefix } from './helpers.js'

const client = redis()

const record = (): SubscriptionRecord => ({
  active: true,
  updatedAt: 1,
  webhooks: [],
})

/** A client that counts the commands it sends. */
function counting(real: Redis): { client: Redis; commands: () => number } {
  let commands = 0
  const client = new Proxy(real, {
    get(target, name, receiver) {
      if (name === 'sendCommand')
        return (...args: Parameters<Redis['sendCommand']>) => {
          commands++
          return target.sendCommand(...args)
        }
      return Reflect.get(target, name, receiver)
    },
  })
  return { client, commands: () => commands }
}

async function listed(store: RedisSubscriptionStore, phases?: PhaseRange): Promise<string[]> {
  const seen: string[] = []
  for await (const key of store.keys(phases)) seen.push(key)
  return seen
}

async function seeded(prefix: string, count: number): Promise<string[]> {
  const store = new RedisSubscriptionStore({ client, prefix, logger: false })
  const keys = Array.from({ length: count }, (_, i) => `acct_${i}`)
  for (let i = 0; i < keys.length; i += 100)
    await Promise.all(
      keys.slice(i, i + 100).map((k) => store.compareAndSet(k, record(), undefined)),
    )
  return keys
}

describe('RedisSubscriptionStore: the index by sweep phase', () => {
  it("a window's keys cost commands by the keys due, not by the keys stored", async () => {
    const prefix = uniquePrefix('phase-cost')
    const keys = await seeded(prefix, 3_000)
    const counted = counting(client)
    const store = new RedisSubscriptionStore({ client: counted.client, prefix, logger: false })
    // The first step after an upgrade scans every record once, indexing them.
    const window = { from: 0.3 * PHASES, to: 0.31 * PHASES }
    const wanted = keys.filter((k) => inPhases(phaseOf(k), window)).sort()
    expect((await listed(store, window)).sort()).toEqual(wanted)
    const scan = counted.commands()
    expect(scan).toBeGreaterThan(keys.length)
    // Then a hundredth of the phases costs a few commands: no read of every record.
    for (const phases of [
      { from: 0.5 * PHASES, to: 0.51 * PHASES },
      { from: 0.99 * PHASES, to: 0.005 * PHASES }, // past the last phase and on from the first
      { from: (1 / 16) * PHASES - 1e6, to: (1 / 16) * PHASES + 1e6 }, // across two sets
    ]) {
      const before = counted.commands()
      const due = keys.filter((k) => inPhases(phaseOf(k), phases)).sort()
      expect((await listed(store, phases)).sort()).toEqual(due)
      expect(counted.commands() - before).toBeLessThanOrEqual(4)
      expect(due.length).toBeGreaterThan(0)
    }
  })

  it('pages a window larger than a page exactly: each key once, none missed', async () => {
    const prefix = uniquePrefix('phase-pages')
    const keys = await seeded(prefix, 2_500)
    const store = new RedisSubscriptionStore({ client, prefix, logger: false })
    await listed(store, { from: 0, to: 1 }) // the scan that completes the index
    const all = await listed(store, { from: 0, to: PHASES })
    expect(all).toHaveLength(keys.length)
    expect(new Set(all).size).toBe(keys.length)
    expect([...all].sort()).toEqual([...keys].sort())
  })

  it('finds the records an older version wrote (no index entry) at the next scan, and keeps the index a day', async () => {
    const prefix = uniquePrefix('phase-heal')
    const store = new RedisSubscriptionStore({ client, prefix, logger: false })
    const keys = await seeded(prefix, 200)
    await listed(store, { from: 0, to: 1 })
    // An older version's records: written without their index entries.
    const old = ['old_1', 'old_2', 'old_3\ud800'] // a lone surrogate too: stored escaped
    for (const k of old) {
      await store.compareAndSet(k, record(), undefined)
      await client.zrem(
        `${prefix}subscription-phase:{${Math.floor(phaseOf(k) / (PHASES / 16)).toString(16)}}`,
        PhaseIndex.member(k),
      )
    }
    const all = { from: 0, to: PHASES }
    expect((await listed(store, all)).filter((k) => old.includes(k))).toEqual([])
    // The index is trusted for HEAL_MS: then (the marker gone) a step scans and indexes again.
    const ttl = await client.pttl(`${prefix}subscription-phase-index`)
    expect(ttl).toBeGreaterThan(HEAL_MS - 60_000)
    expect(ttl).toBeLessThanOrEqual(HEAL_MS)
    await client.del(`${prefix}subscription-phase-index`)
    expect((await listed(store, all)).sort()).toEqual([...keys, ...old].sort())
    expect((await listed(store, all)).sort()).toEqual([...keys, ...old].sort()) // from the index
  })

  it('a deleted record leaves the index; a new record under its key, whatever the interleaving, is in it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        const prefix = uniquePrefix('phase-race')
        const plain = new RedisSubscriptionStore({ client, prefix, logger: false })
        const key = 'acct_race'
        await plain.compareAndSet(key, record(), undefined)
        const version = (await plain.get(key))!.version
        await listed(plain, { from: 0, to: 1 }) // the index complete
        // Every command of the two writers waits for the scheduler: any order of them.
        const delayed = new Proxy(client, {
          get(target, name, receiver) {
            if (name === 'sendCommand')
              return async (...args: Parameters<Redis['sendCommand']>) => {
                await s.schedule(Promise.resolve(), String((args[0] as { name?: string }).name))
                return target.sendCommand(...args)
              }
            return Reflect.get(target, name, receiver)
          },
        })
        const store = new RedisSubscriptionStore({ client: delayed, prefix, logger: false })
        const deleting = store.delete(key, version)
        const creating = (async () => {
          // A new record under the key once the delete took the old one.
          for (let i = 0; i < 20; i++) {
            if (await store.compareAndSet(key, record(), undefined)) return true
          }
          return false
        })()
        await s.waitFor(Promise.all([deleting, creating]))
        const live = (await plain.get(key)) !== undefined
        const indexed = (await listed(plain, { from: 0, to: PHASES })).includes(key)
        expect(indexed).toBe(live)
      }),
      { numRuns: 40 },
    )
  })
})
