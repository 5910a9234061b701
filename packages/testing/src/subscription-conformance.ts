import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type {
  StoredSubscription,
  SubscribedWebhook,
  SubscriptionRecord,
  SubscriptionStore,
} from '@scheduling-kit/core'
import { ConfigError, createWebhookSubscriptions } from '@scheduling-kit/core'
import { startFakeSchedulingService } from './service.js'

type Body = () => Promise<void>

export interface SubscriptionConformanceOptions {
  /** Your test runner's `describe` (vitest, node:test, jest, mocha). */
  describe: (name: string, fn: () => void) => unknown
  /** Your test runner's `it` / `test`. */
  it: (name: string, fn: Body) => unknown
  /** A name for the suite. Default `SubscriptionStore conformance`. */
  name?: string
}

const key = (name: string) => `conformance:${name}:${randomBytes(4).toString('hex')}`
const hookId = () => `wh_${randomBytes(6).toString('hex')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function webhook(overrides: Partial<SubscribedWebhook> = {}): SubscribedWebhook {
  return {
    id: hookId(),
    secret: randomBytes(18).toString('base64url'),
    url: 'https://app.example.test/webhooks/scheduling',
    createdAt: Date.now(),
    ...overrides,
  }
}

function record(webhooks: SubscribedWebhook[] = [webhook()], active = true): SubscriptionRecord {
  return { active, webhooks, updatedAt: Date.now() }
}

/** The record without the version a store adds. */
function plain(stored: StoredSubscription | undefined): SubscriptionRecord | undefined {
  if (stored === undefined) return undefined
  const { version: _, ...rest } = stored
  return rest
}

/**
 * The battery a `SubscriptionStore` must pass: round trips of every field, compare-and-set on
 * the version, the webhook-id index following each write, deletion, the key listing, leases,
 * and races between many writers (one winner per version, no lost index entry). Ends with
 * eight `createWebhookSubscriptions` instances on the store calling `ensure` for one account at
 * once against the fake service: exactly one remote webhook.
 *
 * @example
 * ```ts
 * import { describe, it } from 'vitest'
 * runSubscriptionStoreConformance(() => new MySubscriptionStore(db), { describe, it })
 * ```
 */
export function runSubscriptionStoreConformance(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError(
      'runSubscriptionStoreConformance: pass { describe, it } from your test runner.',
    )
  }
  subscriptionStoreRecords(createStore, options)
  subscriptionStoreIndex(createStore, options)
  subscriptionStoreConcurrency(createStore, options)
}

function subscriptionStoreRecords(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'SubscriptionStore conformance', () => {
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
  })
}

function subscriptionStoreIndex(
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

function subscriptionStoreConcurrency(
  createStore: () => SubscriptionStore | Promise<SubscriptionStore>,
  options: SubscriptionConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'SubscriptionStore conformance', () => {
    it('lease: one owner at a time, extended by its owner, released by its owner only, lapses', async () => {
      const store = await createStore()
      const k = key('lease')
      assert.equal(await store.acquireLease(k, 'a', 400), true)
      assert.equal(await store.acquireLease(k, 'b', 400), false)
      assert.equal(await store.acquireLease(k, 'a', 400), true, 'the owner extends')
      await store.releaseLease(k, 'b')
      assert.equal(await store.acquireLease(k, 'b', 400), false, "b cannot release a's lease")
      await store.releaseLease(k, 'a')
      assert.equal(await store.acquireLease(k, 'b', 150), true)
      await sleep(400)
      assert.equal(await store.acquireLease(k, 'c', 400), true, 'a lapsed lease is free')
    })

    it('20 writers racing on one version: exactly one wins, and its webhook alone is indexed', async () => {
      const store = await createStore()
      const k = key('race')
      await store.compareAndSet(k, record([]), undefined)
      const v = (await store.get(k))!.version
      const candidates = Array.from({ length: 20 }, () => webhook())
      const results = await Promise.all(
        candidates.map((w) => store.compareAndSet(k, record([w]), v)),
      )
      assert.equal(results.filter(Boolean).length, 1)
      const winner = candidates[results.indexOf(true)]!
      assert.deepEqual((await store.get(k))!.webhooks, [winner])
      for (const w of candidates) {
        const found = await store.findByWebhook(w.id)
        assert.equal(found?.key, w === winner ? k : undefined, w.id)
      }
    })

    it('20 racing for one lease: exactly one holds it', async () => {
      const store = await createStore()
      const k = key('leaserace')
      const got = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.acquireLease(k, `owner-${i}`, 5_000)),
      )
      assert.equal(got.filter(Boolean).length, 1)
    })
    it('8 instances ensuring one account at once make one webhook at the service', async () => {
      const service = await startFakeSchedulingService()
      try {
        const account = `acct_${randomBytes(4).toString('hex')}`
        const { access_token } = service.auth.grant(account)
        const tokens = { getAccessToken: async () => access_token }
        const url = `https://app.example.test/hooks/${account}`
        const k = key('ensure')
        const instances = await Promise.all(
          Array.from({ length: 8 }, async () =>
            createWebhookSubscriptions({
              url,
              tokens,
              apiUrl: service.apiUrl,
              store: await createStore(),
              cacheMs: 0,
            }),
          ),
        )
        const results = await Promise.all(instances.map((s) => s.ensure(k)))
        const remote = service.webhooks(account)
        assert.equal(remote.length, 1, `${remote.length} webhooks at the service`)
        assert.equal(results.filter((r) => r.created).length, 1)
        assert.ok(results.every((r) => r.webhookId === remote[0]!.id))
        const owner = await instances[3]!.lookup(remote[0]!.id)
        assert.equal(owner?.account, k)
        assert.equal(owner?.secret, remote[0]!.secret)
      } finally {
        await service.close()
      }
    })
  })
}
