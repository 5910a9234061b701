import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { NotConnectedError } from '../../src/errors/connection.js'
import { ClosedError } from '../../src/errors/store.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

// The token manager keeps the token it read or refreshed in process until its refresh time:
// an API call then costs no store read. A refused token is never answered from memory again,
// and another process's refresh is seen through the store.

const KEY = 'acct'
const HOUR = 3_600_000

function record(n: number, now: number, lifetime = 2 * HOUR): TokenRecord {
  return {
    accessToken: `at_${n}`,
    refreshToken: `rt_${n}`,
    tokenType: 'bearer',
    expiresAt: now + lifetime,
    obtainedAt: now,
  }
}

/** A store that counts its reads. */
function counting(inner: MemoryTokenStore): TokenStore & { reads: number } {
  const store = {
    reads: 0,
    get: (k: string) => {
      store.reads++
      return inner.get(k)
    },
    set: (k: string, r: TokenRecord) => inner.set(k, r),
    delete: (k: string) => inner.delete(k),
    compareAndSet: (k: string, r: TokenRecord, v: number | undefined) =>
      inner.compareAndSet(k, r, v),
    acquireLease: (k: string, o: string, t: number) => inner.acquireLease(k, o, t),
    releaseLease: (k: string, o: string) => inner.releaseLease(k, o),
  }
  return store
}

/** A token endpoint that counts refreshes and numbers the tokens it gives. */
function endpoint(now: () => number) {
  let n = 0
  return {
    get refreshes() {
      return n
    },
    async refresh(_refreshToken: string) {
      n++
      return record(100 + n, now())
    },
  }
}

describe('the token kept in process', () => {
  it('answers a fresh token without a store read, until its refresh time (revalidation off)', async () => {
    let now = 1_000_000
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, now))
    const store = counting(inner)
    const oauth = endpoint(() => now)
    const tokens = createTokenManager({ store, oauth, now: () => now, revalidateMs: 3 * HOUR })
    for (let i = 0; i < 50; i++) expect(await tokens.getAccessToken(KEY)).toBe('at_0')
    expect(store.reads).toBe(1)
    // Just before the refresh time (a 24th of the lifetime before expiry by default): still
    // from memory.
    now += 2 * HOUR - (2 * HOUR) / 24 - 1
    expect(await tokens.getAccessToken(KEY)).toBe('at_0')
    expect(store.reads).toBe(1)
    // At it: the store is read and the token refreshed, once.
    now += 1
    expect(await tokens.getAccessToken(KEY)).toBe('at_101')
    expect(oauth.refreshes).toBe(1)
    const reads = store.reads
    expect(await tokens.getAccessToken(KEY)).toBe('at_101')
    expect(store.reads).toBe(reads)
  })

  it('hands out a frozen record: no caller can change what the others get', async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, { ...record(0, Date.now()), account: { id: 'a', name: 'Ada' } })
    const tokens = createTokenManager({ store: inner, oauth: endpoint(Date.now) })
    const first = await tokens.getRecord(KEY)
    expect(() => {
      ;(first as { accessToken: string }).accessToken = 'tampered'
    }).toThrow(TypeError)
    expect(() => {
      ;(first.account as { name: string }).name = 'tampered'
    }).toThrow(TypeError)
    expect((await tokens.getRecord(KEY)).account?.name).toBe('Ada')
  })

  it("a refused token goes to the store: another process's refresh is used, not repeated", async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, Date.now()))
    const oauth = endpoint(Date.now)
    const a = createTokenManager({ store: counting(inner), oauth })
    const bStore = counting(inner)
    const b = createTokenManager({ store: bStore, oauth })
    expect(await a.getAccessToken(KEY)).toBe('at_0')
    expect(await b.getAccessToken(KEY)).toBe('at_0')
    // The API refuses at_0 to A: A refreshes.
    expect(await a.getAccessToken(KEY, { rejectedToken: 'at_0' })).toBe('at_101')
    // B still holds at_0 in memory (no store read while it is fresh) ...
    expect(await b.getAccessToken(KEY)).toBe('at_0')
    // ... until the API refuses it: B reads the store and takes A's token, no second refresh.
    const reads = bStore.reads
    expect(await b.getAccessToken(KEY, { rejectedToken: 'at_0' })).toBe('at_101')
    expect(bStore.reads).toBe(reads + 1)
    expect(oauth.refreshes).toBe(1)
    // And from memory from then on.
    expect(await b.getAccessToken(KEY)).toBe('at_101')
    expect(bStore.reads).toBe(reads + 1)
  })

  it('a refused token of a removed connection fails with NotConnectedError', async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, Date.now()))
    const tokens = createTokenManager({ store: inner, oauth: endpoint(Date.now) })
    expect(await tokens.getAccessToken(KEY)).toBe('at_0')
    await inner.delete(KEY) // another process disconnected the account
    await expect(tokens.getAccessToken(KEY, { rejectedToken: 'at_0' })).rejects.toBeInstanceOf(
      NotConnectedError,
    )
    await expect(tokens.getAccessToken(KEY)).rejects.toBeInstanceOf(NotConnectedError)
  })

  it('a closed manager refuses calls, a kept token notwithstanding', async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, Date.now()))
    const tokens = createTokenManager({ store: inner, oauth: endpoint(Date.now) })
    expect(await tokens.getAccessToken(KEY)).toBe('at_0')
    await tokens.close()
    await expect(tokens.getAccessToken(KEY)).rejects.toBeInstanceOf(ClosedError)
    await expect(tokens.getRecord(KEY)).rejects.toBeInstanceOf(ClosedError)
  })
})

describe('no stale token after a rejection, in every interleaving', () => {
  it('property: two processes holding a revoked token in memory each end on the one new token, refreshed once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        async (s, callersA, callersB) => {
          const inner = new MemoryTokenStore()
          await inner.set(KEY, record(0, Date.now()))
          // The API accepts only the newest access token: a refresh revokes the ones before.
          let current = 'at_0'
          let refreshes = 0
          const step =
            <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
            async (...args: A): Promise<R> => {
              await s.schedule(Promise.resolve(), name)
              return fn(...args)
            }
          const oauth = {
            refresh: step('refresh', async (_rt: string) => {
              refreshes++
              const next = record(refreshes, Date.now())
              current = next.accessToken
              return next
            }),
          }
          const store: TokenStore = {
            get: step('get', (k: string) => inner.get(k)),
            set: step('set', (k: string, r: TokenRecord) => inner.set(k, r)),
            delete: step('delete', (k: string) => inner.delete(k)),
            compareAndSet: step('cas', (k: string, r: TokenRecord, v: number | undefined) =>
              inner.compareAndSet(k, r, v),
            ),
            acquireLease: step('acquire', (k: string, o: string, t: number) =>
              inner.acquireLease(k, o, t),
            ),
            releaseLease: step('release', (k: string, o: string) => inner.releaseLease(k, o)),
          }
          const managers = [0, 1].map(() =>
            createTokenManager({ oauth, store, lease: { pollMs: 1 }, invalidGrantWaitMs: 30 }),
          )
          // Both hold at_0 in memory; then the service revokes it.
          await s.waitFor(Promise.all(managers.map((m) => m.getAccessToken(KEY))))
          current = 'revoked'
          const apiCall = async (m: (typeof managers)[number]) => {
            const token = await m.getAccessToken(KEY)
            if (token === current) return token
            const again = await m.getAccessToken(KEY, { rejectedToken: token })
            // After a rejection, never the refused token again.
            expect(again).not.toBe(token)
            return again
          }
          const calls = [
            ...Array.from({ length: callersA }, () => apiCall(managers[0]!)),
            ...Array.from({ length: callersB }, () => apiCall(managers[1]!)),
          ]
          const tokens = await s.waitFor(Promise.all(calls))
          const stored = (await inner.get(KEY))!
          expect(refreshes).toBe(1)
          expect(new Set(tokens)).toEqual(new Set([stored.accessToken]))
          expect(stored.accessToken).toBe(current)
          // From memory, afterwards: the new token in both processes, not the refused one.
          for (const m of managers) expect(await s.waitFor(m.getAccessToken(KEY))).toBe(current)
        },
      ),
      { numRuns: 150 },
    )
  }, 180_000)
})

describe('the kept token on the real clock (no clock read per call)', () => {
  it('is answered without a store read within revalidateMs, and read again after it', async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, Date.now()))
    const store = counting(inner)
    const tokens = createTokenManager({ store, oauth: endpoint(Date.now), revalidateMs: 300 })
    for (let i = 0; i < 1_000; i++) expect(await tokens.getAccessToken(KEY)).toBe('at_0')
    expect(store.reads).toBe(1)
    // Another process reconnected the key: seen once the kept token's time is over, at most
    // one timer step (250 ms) late whatever the timer's phase (rounds start at different ones).
    for (const [round, n] of [7, 8, 9, 10].entries()) {
      await inner.set(KEY, { ...record(n, Date.now()) })
      await new Promise((resolve) => setTimeout(resolve, 300 + 250 + 100 + round * 37))
      expect(await tokens.getAccessToken(KEY)).toBe(`at_${n}`)
      expect(store.reads).toBe(2 + round)
    }
    await tokens.close()
  })

  it('revalidateMs 0 reads the store on every call; forget() drops the kept token at once', async () => {
    const inner = new MemoryTokenStore()
    await inner.set(KEY, record(0, Date.now()))
    const store = counting(inner)
    const every = createTokenManager({ store, oauth: endpoint(Date.now), revalidateMs: 0 })
    for (let i = 0; i < 5; i++) await every.getAccessToken(KEY)
    expect(store.reads).toBe(5)
    const kept = createTokenManager({ store, oauth: endpoint(Date.now) })
    await kept.getAccessToken(KEY)
    await inner.set(KEY, record(8, Date.now()))
    expect(await kept.getAccessToken(KEY)).toBe('at_0')
    kept.forget(KEY)
    expect(await kept.getAccessToken(KEY)).toBe('at_8')
    await every.close()
    await kept.close()
    await expect(kept.getAccessToken(KEY)).rejects.toBeInstanceOf(ClosedError)
  })
})
