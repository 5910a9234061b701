import assert from 'node:assert/strict'
import { createOAuthClient, createTokenManager, type TokenStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { startFakeSchedulingService } from './service.js'
import { key, record, sleep } from './token-store-kit.js'

// The token store battery's guarantees across processes, when the store offers them:
// compare-and-set and compare-and-delete on a version, and the refresh lease.

export function tokenStoreVersions(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'TokenStore conformance', () => {
    it('compareAndSet (when offered): versions, and exactly one winner of a race', async () => {
      const store = await createStore()
      if (typeof store.compareAndSet !== 'function') return
      const k = key('cas')
      assert.equal(await store.compareAndSet(k, record(), undefined), true)
      const v1 = (await store.get(k))!.version
      assert.equal(typeof v1, 'number')
      assert.equal(await store.compareAndSet(k, record(), undefined), false)
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.compareAndSet!(k, record({ accessToken: `at_race_${i}` }), v1),
        ),
      )
      assert.equal(results.filter(Boolean).length, 1)
      const winner = results.indexOf(true)
      const stored = (await store.get(k))!
      assert.equal(stored.accessToken, `at_race_${winner}`)
      assert.ok(stored.version !== v1)
      await store.set(k, record())
      assert.equal(
        await store.compareAndSet(k, record(), stored.version),
        false,
        'set must change the version',
      )
    })

    it('compareAndDelete (when offered): only the version read, never a reconnection made since', async () => {
      const store = await createStore()
      if (typeof store.compareAndDelete !== 'function') return
      const k = key('cad')
      await store.set(k, record({ accessToken: 'at_first' }))
      const first = (await store.get(k))!.version!
      await store.set(k, record({ accessToken: 'at_second' }))
      assert.equal(
        await store.compareAndDelete(k, first),
        false,
        'an older version deletes nothing',
      )
      assert.equal((await store.get(k))!.accessToken, 'at_second')
      const second = (await store.get(k))!.version!
      // Disconnected and connected again meanwhile: the version read before must not match.
      await store.delete(k)
      await store.set(k, record({ accessToken: 'at_third' }))
      assert.equal(await store.compareAndDelete(k, second), false, 'a reconnection survives')
      assert.equal(await store.compareAndDelete(k, first), false)
      const third = (await store.get(k))!.version!
      const results = await Promise.all(
        Array.from({ length: 10 }, () => store.compareAndDelete!(k, third)),
      )
      assert.equal(results.filter(Boolean).length, 1, 'exactly one delete wins')
      assert.equal(await store.get(k), undefined)
      assert.equal(await store.compareAndDelete(k, third), false, 'nothing left to delete')
      await store.set(k, record({ accessToken: 'at_fourth' }))
      assert.notEqual((await store.get(k))!.version, third, 'versions go on after a delete')
    })
  })
}

export function tokenStoreLeases(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'TokenStore conformance', () => {
    it('leases (when offered): one holder, released only by it, free again after expiry', async () => {
      const store = await createStore()
      if (typeof store.acquireLease !== 'function' || typeof store.releaseLease !== 'function')
        return
      const k = key('lease')
      const owners = Array.from({ length: 20 }, (_, i) => `owner-${i}`)
      const won = await Promise.all(owners.map((o) => store.acquireLease!(k, o, 10_000)))
      assert.equal(won.filter(Boolean).length, 1)
      const holder = owners[won.indexOf(true)]!
      const other = owners.find((o) => o !== holder)!
      await store.releaseLease(k, other)
      assert.equal(await store.acquireLease(k, other, 10_000), false, 'only the holder can release')
      await store.releaseLease(k, holder)
      assert.equal(await store.acquireLease(k, other, 60), true)
      await sleep(120)
      assert.equal(
        await store.acquireLease(k, holder, 10_000),
        true,
        'an expired lease can be taken',
      )
    })

    it('with leases: three token managers racing on one expired token refresh it exactly once', async () => {
      const store = await createStore()
      if (typeof store.acquireLease !== 'function' || typeof store.releaseLease !== 'function')
        return
      const service = await startFakeSchedulingService({ autoApprove: true })
      try {
        const k = key('race')
        const granted = service.auth.grant('acct_race')
        await store.set(
          k,
          record({
            accessToken: granted.access_token,
            refreshToken: granted.refresh_token,
            expiresAt: Date.now() - 1_000,
          }),
        )
        service.auth.setLatency(30)
        const oauth = createOAuthClient({
          clientId: service.clientId,
          clientSecret: service.clientSecret,
          redirectUri: 'http://127.0.0.1:9/callback',
          authUrl: service.authUrl,
        })
        const managers = Array.from({ length: 3 }, () =>
          createTokenManager({ oauth, store, lease: { pollMs: 5 } }),
        )
        const tokens = await Promise.all(
          Array.from({ length: 30 }, (_, i) => managers[i % 3]!.getAccessToken(k)),
        )
        assert.equal(service.auth.counters.refresh, 1, 'exactly one refresh request')
        assert.equal(new Set(tokens).size, 1)
        assert.equal((await store.get(k))!.accessToken, tokens[0])
      } finally {
        await service.close()
      }
    })
  })
}
