import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { OAuthError } from '../../src/errors/transport.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

// The refresh race of the multi-process test, as a model: two token managers ("processes")
// share one store, every store call and every token request is a step fast-check's scheduler
// orders, and each interleaving it finds is replayed deterministically. The token endpoint
// spends a refresh token when the request arrives and answers in a later step.

type Capabilities = 'cas' | 'plain' | 'cas-lease'
const KEY = 'acct'

function strictServer(s: fc.Scheduler) {
  let n = 0
  const valid = new Set<string>(['rt_0'])
  let successes = 0
  return {
    valid,
    successes: () => successes,
    async refresh(refreshToken: string) {
      await s.schedule(Promise.resolve(), `arrive ${refreshToken}`)
      if (!valid.delete(refreshToken)) {
        await s.schedule(Promise.resolve(), 'refuse')
        throw new OAuthError(400, 'invalid_grant', undefined, 'Token refresh')
      }
      n++
      successes++
      valid.add(`rt_${n}`)
      await s.schedule(Promise.resolve(), `answer rt_${n}`)
      return {
        accessToken: `at_${n}`,
        refreshToken: `rt_${n}`,
        tokenType: 'bearer',
        expiresAt: Date.now() + 7_200_000,
        obtainedAt: Date.now(),
      }
    },
  }
}

/** The store both "processes" share, holding an expired record whose refresh token is `rt_0`. */
async function expiredStore(): Promise<MemoryTokenStore> {
  const inner = new MemoryTokenStore()
  await inner.set(KEY, {
    accessToken: 'at_0',
    refreshToken: 'rt_0',
    tokenType: 'bearer',
    expiresAt: Date.now() - 1000,
    obtainedAt: Date.now() - 7_201_000,
  })
  return inner
}

/** The shared store, each call one scheduled step, offering only the capabilities named. */
function scheduledStore(s: fc.Scheduler, inner: MemoryTokenStore, caps: Capabilities): TokenStore {
  const step =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await s.schedule(Promise.resolve(), name)
      return fn(...args)
    }
  const store: TokenStore = {
    get: step('get', (k: string) => inner.get(k)),
    set: step('set', (k: string, r: TokenRecord) => inner.set(k, r)),
    delete: step('delete', (k: string) => inner.delete(k)),
  }
  if (caps !== 'plain') {
    store.compareAndSet = step('cas', (k: string, r: TokenRecord, v: number | undefined) =>
      inner.compareAndSet(k, r, v),
    )
  }
  if (caps === 'cas-lease') {
    store.acquireLease = step('acquire', (k: string, o: string, t: number) =>
      inner.acquireLease(k, o, t),
    )
    store.releaseLease = step('release', (k: string, o: string) => inner.releaseLease(k, o))
  }
  return store
}

describe.each<Capabilities>(['cas', 'plain', 'cas-lease'])('refresh race, %s store', (caps) => {
  it('property: in every interleaving no caller fails, the stored refresh token is valid and unflagged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 3 }), async (s, callers) => {
        const inner = await expiredStore()
        const server = strictServer(s)
        const managers = [0, 1].map(() =>
          createTokenManager({
            oauth: server,
            store: scheduledStore(s, inner, caps),
            lease: { pollMs: 1 },
            invalidGrantWaitMs: 30,
          }),
        )
        const calls = managers.flatMap((m) =>
          Array.from({ length: callers }, () => m.getAccessToken(KEY)),
        )
        const settled = await s.waitFor(Promise.allSettled(calls))
        const stored = (await inner.get(KEY))!
        const failures = settled.filter((r) => r.status === 'rejected')
        expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([])
        expect(stored.reauthorizationRequired).toBeUndefined()
        expect(server.valid.has(stored.refreshToken)).toBe(true)
        expect(server.successes()).toBe(1)
        if (caps === 'cas-lease') expect(server.valid.size).toBe(1)
      }),
      { numRuns: 150 },
    )
  }, 180_000)
})

describe('refresh race through store faults, cas-lease store', () => {
  it('property: in every interleaving, with writes and lease releases that throw, the new tokens land and no caller fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.boolean(), { maxLength: 8 }),
        async (s, callers, faults) => {
          const inner = await expiredStore()
          const server = strictServer(s)
          // Each write or release takes the next fault: true throws, as a cut connection does.
          let next = 0
          const faulty = (store: TokenStore): TokenStore => ({
            ...store,
            compareAndSet: async (k, r, v) => {
              if (faults[next++] === true) throw new Error('connection cut at the write')
              return store.compareAndSet!(k, r, v)
            },
            releaseLease: async (k, o) => {
              if (faults[next++] === true) throw new Error('connection cut at the release')
              return store.releaseLease!(k, o)
            },
          })
          const managers = [0, 1].map(() =>
            createTokenManager({
              oauth: server,
              store: faulty(scheduledStore(s, inner, 'cas-lease')),
              lease: { pollMs: 1 },
              invalidGrantWaitMs: 30,
            }),
          )
          const calls = managers.flatMap((m) =>
            Array.from({ length: callers }, () => m.getAccessToken(KEY)),
          )
          const settled = await s.waitFor(Promise.allSettled(calls))
          const stored = (await inner.get(KEY))!
          const failures = settled.filter((r) => r.status === 'rejected')
          expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([])
          expect(server.successes()).toBe(1)
          expect(server.valid.has(stored.refreshToken)).toBe(true)
          expect(new Set(settled.map((r) => (r as PromiseFulfilledResult<string>).value))).toEqual(
            new Set([stored.accessToken]),
          )
          await s.waitFor(Promise.all(managers.map((m) => m.close())))
        },
      ),
      { numRuns: 150 },
    )
  }, 180_000)
})
