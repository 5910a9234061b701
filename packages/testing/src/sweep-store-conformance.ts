import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ConfigError, type SweepStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'

// The battery a `SweepStore` must pass: a shard's lease held by one owner at a time (of many
// racing for it, one), renewed by its owner, given back by its owner only, taken by another once
// it lapses; a checkpoint absent until set, moved only from the version read (of many racing
// writers at one version, one wins), kept exactly.

/**
 * Runs the sweep store battery. `createStore` gives a store over private or empty shards: the
 * kit's shard names are drawn at random.
 *
 * @example
 * ```ts
 * runSweepStoreConformance(() => new MySweepStore(db), { describe, it })
 * ```
 */
export function runSweepStoreConformance(
  createStore: () => SweepStore | Promise<SweepStore>,
  options: StoreConformanceOptions,
): void {
  if (typeof options?.describe !== 'function' || typeof options.it !== 'function')
    throw new ConfigError('runSweepStoreConformance: pass { describe, it } from your test runner.')
  const { describe, it } = options
  const shard = () => `shard_${randomBytes(6).toString('hex')}`
  describe(options.name ?? 'SweepStore conformance', () => {
    it("a shard's lease: taken when free, refused to another owner, renewed by its owner, released by its owner only", async () => {
      const store = await createStore()
      const name = shard()
      assert.equal(await store.acquireLease(name, 'a', 60_000), true)
      assert.equal(await store.acquireLease(name, 'b', 60_000), false)
      assert.equal(await store.acquireLease(name, 'a', 60_000), true, 'renewed by its owner')
      await store.releaseLease(name, 'b')
      assert.equal(await store.acquireLease(name, 'b', 60_000), false, 'not released by another')
      await store.releaseLease(name, 'a')
      assert.equal(await store.acquireLease(name, 'b', 60_000), true)
    })

    it('a lapsed lease is taken by another owner', async () => {
      const store = await createStore()
      const name = shard()
      assert.equal(await store.acquireLease(name, 'a', 30), true)
      // Waits for the lapse itself, asking again, not for a set time.
      while (!(await store.acquireLease(name, 'b', 60_000)))
        await new Promise((resolve) => setTimeout(resolve, 10))
      assert.equal(await store.acquireLease(name, 'a', 60_000), false)
    })

    it('of 20 owners racing for one free lease, one holds it', async () => {
      const store = await createStore()
      const name = shard()
      const won = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.acquireLease(name, `owner_${i}`, 60_000)),
      )
      assert.equal(won.filter(Boolean).length, 1)
    })

    it('a checkpoint: absent until set (a lease alone sets none), moved only from the version read, kept exactly', async () => {
      const store = await createStore()
      const name = shard()
      assert.equal(await store.checkpoint(name), undefined)
      await store.acquireLease(name, 'a', 60_000)
      assert.equal(await store.checkpoint(name), undefined)
      const through = 1_893_456_000_123
      const first = await store.setCheckpoint(name, through, undefined)
      assert.equal(typeof first, 'number')
      assert.deepEqual(await store.checkpoint(name), { through, version: first })
      assert.equal(await store.setCheckpoint(name, through + 1, undefined), undefined)
      assert.equal(await store.setCheckpoint(name, through + 1, first! + 7), undefined)
      const second = await store.setCheckpoint(name, through + 60_000, first)
      assert.notEqual(second, undefined)
      assert.notEqual(second, first)
      assert.deepEqual(await store.checkpoint(name), { through: through + 60_000, version: second })
      assert.equal(await store.setCheckpoint(name, through, first), undefined, 'a stale version')
    })

    it('of 20 writers racing at one version, one moves the checkpoint', async () => {
      const store = await createStore()
      const name = shard()
      const first = await store.setCheckpoint(name, 1_000, undefined)
      const moved = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.setCheckpoint(name, 2_000 + i, first)),
      )
      const winners = moved.filter((v) => v !== undefined)
      assert.equal(winners.length, 1)
      const now = await store.checkpoint(name)
      assert.equal(now?.version, winners[0])
      assert.equal(now?.through, 2_000 + moved.findIndex((v) => v !== undefined))
      const fresh = await Promise.all(
        Array.from({ length: 20 }, () => store.setCheckpoint(shard(), 5, undefined)),
      )
      assert.ok(
        fresh.every((v) => v !== undefined),
        'each new shard takes its first write',
      )
    })
  })
}
