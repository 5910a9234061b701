import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import {
  ConfigError,
  createOAuthClient,
  createTokenManager,
  newConnection,
  type TokenRecord,
  type TokenStore,
} from '@scheduling-kit/core'
import { startFakeSchedulingService } from './service.js'

type Body = () => Promise<void>

export interface StoreConformanceOptions {
  /** Your test runner's `describe` (vitest, node:test, jest, mocha). */
  describe: (name: string, fn: () => void) => unknown
  /** Your test runner's `it` / `test`. */
  it: (name: string, fn: Body) => unknown
  /** A name for the suite. Default `TokenStore conformance`. */
  name?: string
}

function record(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    accessToken: `at_${randomBytes(6).toString('hex')}`,
    refreshToken: `rt_${randomBytes(6).toString('hex')}`,
    expiresAt: Date.now() + 7_200_000,
    tokenType: 'bearer',
    obtainedAt: Date.now(),
    account: { id: 'acct_1', name: 'Ada' },
    data: { plan: 'pro', tags: ['a', 'b'], nested: { n: 1 } },
    ...overrides,
  }
}

/** A record as stored, without the `version` a versioned store adds. */
function plain(value: TokenRecord | undefined): TokenRecord | undefined {
  if (value === undefined) return undefined
  const { version: _, ...rest } = value
  return rest
}

const key = (name: string) => `conformance:${name}:${randomBytes(4).toString('hex')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * The battery a `TokenStore` must pass. Call it from your own test file:
 *
 * ```ts
 * import { describe, it } from 'vitest' // or 'node:test'
 * runTokenStoreConformance(() => new MyStore(db), { describe, it })
 * ```
 *
 * The compare-and-set and lease tests run when the store has those methods; so does a race of
 * three token managers against the fake service, which must refresh exactly once.
 *
 * @example
 * ```ts
 * // test/store.test.ts
 * import { describe, it } from 'vitest'
 * runTokenStoreConformance(() => new MyTokenStore(db), { describe, it })
 * ```
 */
export function runTokenStoreConformance(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError('runTokenStoreConformance: pass { describe, it } from your test runner.')
  }
  tokenStoreRecords(createStore, options)
  tokenStoreVersions(createStore, options)
  tokenStoreLeases(createStore, options)
}

function tokenStoreRecords(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'TokenStore conformance', () => {
    it('get: undefined for a key never set', async () => {
      assert.equal(await (await createStore()).get(key('missing')), undefined)
    })

    it('set then get: the same record, every field', async () => {
      const store = await createStore()
      const k = key('roundtrip')
      const value = record()
      await store.set(k, value)
      assert.deepEqual(plain(await store.get(k)), value)
    })

    it('set replaces the record', async () => {
      const store = await createStore()
      const k = key('replace')
      await store.set(k, record())
      const second = record({ accessToken: 'at_second', data: { other: true } })
      await store.set(k, second)
      assert.deepEqual(plain(await store.get(k)), second)
    })

    it('delete removes the record; deleting a missing key is fine', async () => {
      const store = await createStore()
      const k = key('delete')
      await store.set(k, record())
      await store.delete(k)
      assert.equal(await store.get(k), undefined)
      await store.delete(key('never-set'))
    })

    it('keys are isolated, even when one is a prefix of another', async () => {
      const store = await createStore()
      const a = key('iso')
      const [x, y, z] = [record(), record(), record()]
      await store.set(a, x)
      await store.set(`${a}:1`, y)
      await store.set(`${a}1`, z)
      await store.delete(a)
      assert.equal(await store.get(a), undefined)
      assert.deepEqual(plain(await store.get(`${a}:1`)), y)
      assert.deepEqual(plain(await store.get(`${a}1`)), z)
    })

    it('a rolled-back record is never used: after a reconnection as another account, the old connection restored is refused, naming why', async () => {
      const store = await createStore()
      const k = key('rollback')
      const refreshes: string[] = []
      const tokens = createTokenManager({
        oauth: { refresh: async (rt) => void refreshes.push(rt) as never },
        store,
        revalidateMs: 0,
      })
      const asP = record({ account: { id: 'acct_P' }, connection: newConnection() })
      await store.set(k, asP)
      assert.equal(await tokens.getAccessToken(k), asP.accessToken)
      // The user connects again, as another account: a later generation (even when this
      // clock stood still, or went back).
      const asQ = record({
        account: { id: 'acct_Q' },
        connection: newConnection(asP.connection, 0),
        expiresAt: asP.expiresAt - 60_000,
      })
      await store.set(k, asQ)
      assert.equal(await tokens.getAccessToken(k), asQ.accessToken)
      // Q's tokens refreshed and re-stored as the app would: the same generation, still used.
      const refreshed = { ...asQ, accessToken: `${asQ.accessToken}_2` }
      await store.set(k, refreshed)
      assert.equal(await tokens.getAccessToken(k), refreshed.accessToken)
      // P's old record restored (a backup, a replica that lagged): refused, not used as Q's.
      await store.set(k, asP)
      await assert.rejects(tokens.getAccessToken(k), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'not_connected')
        assert.match(error.message, /rolled back/)
        assert.ok(!error.message.includes(asP.accessToken))
        assert.ok(!error.message.includes(asP.refreshToken))
        return true
      })
      assert.deepEqual(refreshes, [])
      // A later connection is used again.
      const again = record({ connection: newConnection(asQ.connection) })
      await store.set(k, again)
      assert.equal(await tokens.getAccessToken(k), again.accessToken)
    })

    it('a record read is a copy: changing it does not change the store', async () => {
      const store = await createStore()
      const k = key('copy')
      const value = record()
      await store.set(k, value)
      value.accessToken = 'changed-after-set'
      const read = (await store.get(k))!
      assert.notEqual(read.accessToken, 'changed-after-set')
      ;(read.data as { plan: string }).plan = 'changed-after-get'
      assert.equal(((await store.get(k))!.data as { plan: string }).plan, 'pro')
    })
  })
}

function tokenStoreVersions(
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

function tokenStoreLeases(
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
