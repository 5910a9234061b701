import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ConfigError, type SweepStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'

// The battery a `SweepStore` must pass: a shard's lease held by one owner at a time (of many
// racing for it, one), renewed by its owner, given back by its owner only, taken by another once
// it lapses; a checkpoint absent until set, moved only from the version read (of many racing
// writers at one version, one wins), kept exactly.

export interface SweepStoreConformanceOptions extends StoreConformanceOptions {
  /**
   * Writes `value` straight into the stored checkpoint `name` (as a hostile or broken
   * instance could), where the store keeps `field`; rejects when the store cannot hold such a
   * value (a typed column). With it, the battery checks that a checkpoint that is not a
   * number is read as none and replaced by the next write.
   */
  corrupt?: (name: string, field: 'through' | 'version', value: string) => Promise<void>
}

/** Names a store must keep apart: lone surrogates, key syntax, length. */
const ALIKE = ['n\ud800', 'n\udc00', 'n', 'n:', 'n{', 'n}', '{n}', 'n'.repeat(300), 'n'.repeat(301)]

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
  options: SweepStoreConformanceOptions,
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

    leaseRaces(it, createStore, shard)

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

    alikeAndHostile(it, createStore, options.corrupt, shard)

    checkpointRace(it, createStore, shard)
  })
}

/** Writers racing at one version: one moves the checkpoint; each new shard takes its first. */
function checkpointRace(
  it: StoreConformanceOptions['it'],
  createStore: () => SweepStore | Promise<SweepStore>,
  shard: () => string,
): void {
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
}

/** Names kept apart, and checkpoints written with what is not a number (the `corrupt` option). */
function alikeAndHostile(
  it: StoreConformanceOptions['it'],
  createStore: () => SweepStore | Promise<SweepStore>,
  corrupt: SweepStoreConformanceOptions['corrupt'],
  shard: () => string,
): void {
  it('names that differ only in lone surrogates, :, {, } or length: their own leases and checkpoints', async () => {
    const store = await createStore()
    const base = shard()
    for (const [i, n] of ALIKE.entries()) {
      assert.equal(await store.acquireLease(`${base}${n}`, `owner_${i}`, 60_000), true, n)
      assert.equal(
        typeof (await store.setCheckpoint(`${base}${n}`, 1_000 + i, undefined)),
        'number',
        n,
      )
    }
    for (const [i, n] of ALIKE.entries())
      assert.equal((await store.checkpoint(`${base}${n}`))?.through, 1_000 + i, n)
  })

  if (corrupt !== undefined) {
    it('a checkpoint whose time or version is not a number (NaN, text, infinities, 0, a fraction): read as none, and the next write from none replaces it', async () => {
      const store = await createStore()
      for (const field of ['through', 'version'] as const)
        for (const value of ['NaN', 'not a number', 'Infinity', '-Infinity', '0', '1.5']) {
          if (field === 'through' && (value === '0' || value === '1.5')) continue // times both
          const name = shard()
          const first = await store.setCheckpoint(name, 5_000, undefined)
          const written = await corrupt(name, field, value).then(
            () => true,
            () => false,
          )
          if (!written) continue
          const what = `${field} = ${value}`
          assert.equal(await store.checkpoint(name), undefined, what)
          const next = await store.setCheckpoint(name, 6_000, undefined)
          assert.equal(typeof next, 'number', what)
          assert.deepEqual(await store.checkpoint(name), { through: 6_000, version: next }, what)
          assert.equal(typeof first, 'number')
        }
    })
  }
}

/** A lapsed lease taken by another owner, and one free lease raced for by many. */
function leaseRaces(
  it: StoreConformanceOptions['it'],
  createStore: () => SweepStore | Promise<SweepStore>,
  shard: () => string,
): void {
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
}
