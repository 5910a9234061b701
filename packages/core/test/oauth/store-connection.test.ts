// The callback's write of a new connection: generations are stored in order whatever
// interleaving of connects (and refreshes) of one key the store sees.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CONNECTION_WRITE_ATTEMPTS, storeConnection } from '../../src/oauth/store-connection.js'
import { connectionStamp } from '../../src/tokens/connection.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

const made =
  (name: string) =>
  (connection: string): TokenRecord => ({
    accessToken: `at_${name}`,
    refreshToken: `rt_${name}`,
    expiresAt: 2_000_000_000_000,
    tokenType: 'Bearer',
    account: { id: name },
    connection,
  })

/** The store as one process sees it: each answer comes when the scheduler says; writes logged. */
function scheduled(s: fc.Scheduler, store: MemoryTokenStore, written: string[]): TokenStore {
  return {
    get: (key) => s.schedule(store.get(key), 'get'),
    set: (key, record) => s.schedule(store.set(key, record), 'set'),
    delete: (key) => s.schedule(store.delete(key), 'delete'),
    compareAndSet: async (key, record, version) => {
      // Logged when the store wrote it; the answer reaches the caller when the scheduler says.
      const ok = await store.compareAndSet(key, record, version)
      if (ok && record.connection !== undefined) written.push(record.connection)
      return await s.schedule(Promise.resolve(ok), 'compare-and-set')
    },
  }
}

describe('storeConnection', () => {
  it('property: concurrent connects and refreshes of one key store generations in increasing order, the last connect stored', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 2, max: 5 }),
        fc.integer({ min: 0, max: 3 }),
        async (s, connects, refreshes) => {
          const store = new MemoryTokenStore()
          const written: string[] = []
          const view = scheduled(s, store, written)
          const done: Promise<unknown>[] = []
          for (let i = 0; i < connects; i++)
            done.push(
              view.get('k').then((previous) => storeConnection(view, 'k', previous, made(`c${i}`))),
            )
          // A token manager refreshing: same generation, compare-and-set over what it read.
          for (let i = 0; i < refreshes; i++)
            done.push(
              view.get('k').then(async (current) => {
                if (current === undefined) return
                const { version, ...rest } = current
                await view.compareAndSet!('k', { ...rest, accessToken: `at_r${i}` }, version)
              }),
            )
          const results = await s.waitFor(Promise.allSettled(done))
          expect(results.every((r) => r.status === 'fulfilled')).toBe(true)
          const connectionsWritten = [...new Set(written)]
          const stamps = connectionsWritten.map((c) => connectionStamp(c)!)
          for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!)
          expect(connectionsWritten).toHaveLength(connects)
          expect((await store.get('k'))?.connection).toBe(connectionsWritten.at(-1))
        },
      ),
      { numRuns: 300 },
    )
  })

  it('names the conflict when every write loses, and never writes over another', async () => {
    const store = new MemoryTokenStore()
    let tries = 0
    const busy: TokenStore = {
      get: (key) => store.get(key),
      set: (key, record) => store.set(key, record),
      delete: (key) => store.delete(key),
      compareAndSet: async (key) => {
        tries++
        // Another writer always got in first.
        await store.set(key, made('other')(`x${tries}`))
        return false
      },
    }
    const error = await storeConnection(busy, 'k', undefined, made('mine')).catch((e) => e)
    expect(error.code).toBe('store_failed')
    expect(error.message).toMatch(new RegExp(`each of ${CONNECTION_WRITE_ATTEMPTS} writes`))
    expect(tries).toBe(CONNECTION_WRITE_ATTEMPTS)
    expect((await store.get('k'))?.account?.id).toBe('other')
  })

  it('writes unconditionally to a store without compareAndSet, with a later generation', async () => {
    const store = new MemoryTokenStore()
    const plain: TokenStore = {
      get: (key) => store.get(key),
      set: (key, record) => store.set(key, record),
      delete: (key) => store.delete(key),
    }
    const first = await storeConnection(plain, 'k', undefined, made('a'))
    const second = await storeConnection(plain, 'k', await plain.get('k'), made('b'))
    expect(connectionStamp(second.connection)!).toBeGreaterThan(connectionStamp(first.connection)!)
    expect((await store.get('k'))?.account?.id).toBe('b')
  })
})
