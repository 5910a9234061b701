import assert from 'node:assert/strict'
import type { SubscriptionStore } from '@scheduling-kit/core'
import { inPhases, PHASES, phaseOf } from '@scheduling-kit/core/store'
import { alikeKeys } from './alike-keys.js'
import type { SubscriptionConformanceOptions } from './subscription-conformance-options.js'
import { hookId, key, plain, record, webhook } from './subscription-store-kit.js'

type It = SubscriptionConformanceOptions['it']

// The subscription store battery's records: round trips of every field, compare-and-set on the
// version, deletion, the key listing, and the webhook-id index following each write.

/** Records read back whole, whatever their keys. */
function roundTrips(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  it: It,
): void {
  it('get: undefined for a key never written', async () => {
    assert.equal(await (await createStore()).get(key('missing')), undefined)
  })

  it('compareAndSet on no record, then get: every field, and a version', async () => {
    const store = await createStore()
    const k = key('roundtrip')
    const value = record([
      webhook(),
      webhook({ removedAt: Date.now() - 5, gone: true, url: 'https://old.example.test/h' }),
    ])
    assert.equal(await store.compareAndSet(k, value, undefined), true)
    const got = await store.get(k)
    assert.deepEqual(plain(got), value)
    assert.equal(typeof got!.version, 'number')
  })

  it('keys with any characters: colons, braces, unicode, 1 000 characters', async () => {
    const store = await createStore()
    for (const odd of [
      `${key('odd')}:a:b`,
      `}{${key('brace')}`,
      `${key('uni')}-äö-😀`,
      `${key('long')}${'x'.repeat(1000)}`,
    ]) {
      const value = record()
      assert.equal(await store.compareAndSet(odd, value, undefined), true, odd.slice(0, 40))
      assert.deepEqual(plain(await store.get(odd)), value)
      const found = await store.findByWebhook(value.webhooks[0]!.id)
      assert.equal(found?.key, odd)
    }
  })
}

/** Compare-and-set on the version, deletion by the current version only. */
function versionedWrites(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  it: It,
): void {
  it('compareAndSet refuses a stale version and a second create, keeps the newer record', async () => {
    const store = await createStore()
    const k = key('cas')
    const first = record()
    assert.equal(await store.compareAndSet(k, first, undefined), true)
    assert.equal(await store.compareAndSet(k, record(), undefined), false)
    const read = await store.get(k)
    const second = record()
    assert.equal(await store.compareAndSet(k, second, read!.version), true)
    assert.equal(await store.compareAndSet(k, record(), read!.version), false)
    assert.deepEqual(plain(await store.get(k)), second)
    assert.notEqual((await store.get(k))!.version, read!.version)
  })
  it('delete with the current version only; its webhooks are found no more', async () => {
    const store = await createStore()
    const k = key('delete')
    const a = webhook()
    await store.compareAndSet(k, record([a], false), undefined)
    const v = (await store.get(k))!.version
    assert.equal(await store.delete(k, v + 7), false)
    assert.notEqual(await store.get(k), undefined)
    assert.equal(await store.delete(k, v), true)
    assert.equal(await store.get(k), undefined)
    assert.equal(await store.findByWebhook(a.id), undefined)
    // A write based on the read before the delete cannot bring the record back.
    assert.equal(await store.compareAndSet(k, record([a]), v), false)
  })
}

/** The key listing, whole and by phase. */
function keyListings(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  it: It,
): void {
  it('keys lists every record once, deleted ones not', async () => {
    const store = await createStore()
    const mine = Array.from({ length: 25 }, (_, i) => key(`list${i}`))
    for (const k of mine) await store.compareAndSet(k, record(), undefined)
    const gone = mine.pop()!
    await store.delete(gone, (await store.get(gone))!.version)
    const seen: string[] = []
    for await (const k of store.keys()) seen.push(k)
    const counted = seen.filter((k) => mine.includes(k))
    assert.equal(counted.length, mine.length, 'each record listed')
    assert.equal(new Set(counted).size, counted.length, 'each listed once')
    assert.equal(seen.includes(gone), false)
  })

  it('keys(phases) lists at least every record whose phase falls in the range (wrapping past the last phase too), each once', async () => {
    const store = await createStore()
    const mine = Array.from({ length: 40 }, (_, i) => key(`phase${i}`))
    for (const k of mine) await store.compareAndSet(k, record(), undefined)
    const gone = mine.pop()!
    await store.delete(gone, (await store.get(gone))!.version)
    const quarter = PHASES / 4
    for (const phases of [
      { from: 0, to: quarter },
      { from: quarter, to: 3 * quarter },
      { from: 3 * quarter, to: quarter / 2 },
    ]) {
      const seen: string[] = []
      for await (const k of store.keys(phases)) seen.push(k)
      const wanted = mine.filter((k) => inPhases(phaseOf(k), phases))
      assert.deepEqual(
        seen.filter((k) => wanted.includes(k)).sort(),
        wanted.sort(),
        JSON.stringify(phases),
      )
      assert.equal(seen.includes(gone), false)
    }
  })
}

export function subscriptionStoreRecords(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'SubscriptionStore conformance', () => {
    roundTrips(createStore, it)
    versionedWrites(createStore, it)
    keyListings(createStore, it)
  })
}

export function subscriptionStoreIndex(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'SubscriptionStore conformance', () => {
    it('findByWebhook follows each write: new ids find the record, dropped ids do not', async () => {
      const store = await createStore()
      const k = key('index')
      const [a, b, c] = [webhook(), webhook(), webhook()]
      await store.compareAndSet(k, record([a, b]), undefined)
      assert.equal((await store.findByWebhook(a.id))?.key, k)
      assert.deepEqual((await store.findByWebhook(b.id))?.record, await store.get(k))
      const v = (await store.get(k))!.version
      await store.compareAndSet(k, record([b, c]), v)
      assert.equal(await store.findByWebhook(a.id), undefined)
      assert.equal((await store.findByWebhook(c.id))?.key, k)
      assert.equal((await store.findByWebhook(b.id))?.record.webhooks.length, 2)
      assert.equal(await store.findByWebhook(hookId()), undefined)
    })

    it('findByWebhook: ids made of glob, quote and brace characters find nothing else, and can be ids', async () => {
      const store = await createStore()
      const k = key('hostile')
      const odd = [
        'wh_*',
        'wh_?',
        'wh_[a]',
        '{wh}',
        "wh_' OR '1'='1",
        'wh_"x"',
        'wh_\\',
        '%',
        `wh_${'z'.repeat(250)}`,
      ]
      await store.compareAndSet(k, record([webhook({ id: 'wh_a' })]), undefined)
      for (const id of odd) assert.equal(await store.findByWebhook(id), undefined, id)
      const version = (await store.get(k))!.version
      await store.compareAndSet(k, record(odd.map((id) => webhook({ id }))), version)
      for (const id of odd) assert.equal((await store.findByWebhook(id))?.key, k, id)
      assert.equal(await store.findByWebhook('wh_a'), undefined)
      assert.equal(await store.findByWebhook('wh_'), undefined)
    })

    it('a refused compareAndSet changes no index entry', async () => {
      const store = await createStore()
      const k = key('refused')
      const a = webhook()
      await store.compareAndSet(k, record([a]), undefined)
      const stray = webhook()
      assert.equal(await store.compareAndSet(k, record([stray]), 999_999), false)
      assert.equal(await store.findByWebhook(stray.id), undefined)
      assert.equal((await store.findByWebhook(a.id))?.key, k)
    })
  })
}

/** Keys alike but for a lone surrogate, `:`, `{`, `}` or length (alike-keys.ts): kept apart. */
export function subscriptionStoreAlikeKeys(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  describe(options.name ?? 'SubscriptionStore conformance', () => {
    it('keys that differ only in lone surrogates, :, {, } or length: each its own record, found by its own webhook, listed as written', async () => {
      const store = await createStore()
      const keys = alikeKeys(key('alike'))
      const values = keys.map(() => record())
      for (const [i, k] of keys.entries())
        assert.equal(await store.compareAndSet(k, values[i]!, undefined), true, JSON.stringify(k))
      for (const [i, k] of keys.entries()) {
        assert.deepEqual(plain(await store.get(k)), values[i], JSON.stringify(k))
        assert.equal((await store.findByWebhook(values[i]!.webhooks[0]!.id))?.key, k)
      }
      const listed = new Set<string>()
      for await (const k of store.keys()) listed.add(k)
      for (const k of keys) assert.ok(listed.has(k), `keys() lists ${JSON.stringify(k)} as written`)
    })
  })
}
