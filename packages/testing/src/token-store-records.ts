import assert from 'node:assert/strict'
import { createTokenManager, newConnection, type TokenStore } from '@scheduling-kit/core'
import { alikeKeys } from './alike-keys.js'
import type { StoreConformanceOptions } from './conformance-options.js'

type It = StoreConformanceOptions['it']

import { key, plain, record } from './token-store-kit.js'

// The token store battery's records: get, set and delete, every field kept, keys isolated, a
// rolled-back record refused.

/** A record stored, replaced, deleted, kept apart from its neighbours. */
function recordBasics(createStore: () => TokenStore | Promise<TokenStore>, it: It): void {
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
}

/** A restored older connection is never used (the token manager over the store). */
function rolledBack(createStore: () => TokenStore | Promise<TokenStore>, it: It): void {
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
}

/** What a read returns is the caller's to change. */
function readsAreCopies(createStore: () => TokenStore | Promise<TokenStore>, it: It): void {
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
}

export function tokenStoreRecords(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}

  describe(options.name ?? 'TokenStore conformance', () => {
    recordBasics(createStore, it)
    rolledBack(createStore, it)
    readsAreCopies(createStore, it)
  })
}

/** Keys alike but for a lone surrogate, `:`, `{`, `}` or length (alike-keys.ts): kept apart. */
export function tokenStoreAlikeKeys(
  createStore: () => TokenStore | Promise<TokenStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  describe(options.name ?? 'TokenStore conformance', () => {
    it('keys that differ only in lone surrogates, :, {, } or length: each its own record', async () => {
      const store = await createStore()
      const keys = alikeKeys(key('alike'))
      const values = keys.map((_, i) => record({ accessToken: `at_alike_${i}` }))
      for (const [i, k] of keys.entries()) await store.set(k, values[i]!)
      for (const [i, k] of keys.entries())
        assert.deepEqual(plain(await store.get(k)), values[i], JSON.stringify(k))
      await store.delete(keys[0]!)
      assert.equal(await store.get(keys[0]!), undefined)
      assert.deepEqual(plain(await store.get(keys[1]!)), values[1])
    })
  })
}
