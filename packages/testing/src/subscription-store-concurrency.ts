import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { SubscriptionStore } from '@scheduling-kit/core'
import { createWebhookSubscriptions } from '@scheduling-kit/core'
import { startFakeSchedulingService } from './service.js'
import type { SubscriptionConformanceOptions } from './subscription-conformance-options.js'
import { key, record, sleep, webhook } from './subscription-store-kit.js'

// The subscription store battery across instances: leases, many writers racing on one version,
// and eight instances ensuring one account's webhook at once.

export function subscriptionStoreConcurrency(
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
