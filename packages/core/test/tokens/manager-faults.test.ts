import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/errors/errors.js'
import { ClosedError } from '../../src/errors/store.js'
import { TimeoutError } from '../../src/errors/transport.js'
import { createOAuthClient, receiptTime } from '../../src/oauth/client.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import type { TokenManagerOptions } from '../../src/tokens/options.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

// What production does to a refresh: a store that throws at the write, a lease release that
// fails, a token endpoint slower than the client's time-out, a holder paused past its lease, a
// shutdown in the middle, a clock running ahead. Against the strict server (single-use refresh
// tokens; reusing one revokes the grant), so any second use of a spent token shows.

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
})
afterEach(() => server.close())

function oauth(timeoutMs?: number, now?: () => number) {
  return createOAuthClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    authUrl: server.url,
    timeoutMs,
    now,
  })
}

function manager(store: TokenStore, options: Partial<TokenManagerOptions> = {}) {
  return createTokenManager({
    oauth: oauth(),
    store,
    retry: { baseDelayMs: 2, maxDelayMs: 20 },
    lease: { pollMs: 2 },
    invalidGrantWaitMs: 300,
    ...options,
  })
}

async function connect(store: TokenStore, key: string): Promise<TokenRecord> {
  const granted = server.grant(key)
  const record: TokenRecord = {
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token,
    tokenType: 'bearer',
    expiresAt: Date.now() - 1_000,
    obtainedAt: Date.now() - 7_201_000,
  }
  await store.set(key, record)
  return record
}

/** A MemoryTokenStore whose chosen methods throw the next `n` times they are called. */
class FlakyStore extends MemoryTokenStore {
  failures: Partial<Record<'compareAndSet' | 'get' | 'releaseLease', number>> = {}
  calls = { compareAndSet: 0, releaseLease: 0 }
  #maybeFail(method: 'compareAndSet' | 'get' | 'releaseLease'): void {
    const left = this.failures[method] ?? 0
    if (left > 0) {
      this.failures[method] = left - 1
      throw new Error(`connection lost (${method})`)
    }
  }
  override async get(key: string) {
    this.#maybeFail('get')
    return super.get(key)
  }
  override async compareAndSet(key: string, record: TokenRecord, version: number | undefined) {
    this.calls.compareAndSet++
    this.#maybeFail('compareAndSet')
    return super.compareAndSet(key, record, version)
  }
  override async releaseLease(key: string, owner: string) {
    this.calls.releaseLease++
    this.#maybeFail('releaseLease')
    return super.releaseLease(key, owner)
  }
}

const valid = (record: TokenRecord | undefined) =>
  record !== undefined && server.isRefreshTokenValid(record.refreshToken)

describe('a store that fails after the refresh', () => {
  it('a write that throws (a connection cut, a restart) is retried until the new tokens land', async () => {
    const store = new FlakyStore()
    await connect(store, 'u1')
    const failed: unknown[] = []
    const tokens = manager(store, { onRefreshFailed: (_key, error) => failed.push(error) })
    // The refresh's write throws three times, and the read after it once.
    store.failures = { compareAndSet: 3 }
    const token = await tokens.getAccessToken('u1')
    const stored = await store.get('u1')
    expect(stored?.accessToken).toBe(token)
    expect(valid(stored)).toBe(true)
    expect(store.calls.compareAndSet).toBe(4)
    expect(server.counters.refresh).toBe(1)
    expect(failed).toHaveLength(3) // each failed write told to onRefreshFailed
  })

  it('the re-read after a refused write throwing is retried too', async () => {
    const store = new FlakyStore()
    const first = await connect(store, 'u1')
    const tokens = manager(store)
    // Someone else's write bumps the version between our read and our write (same refresh token).
    let bumped = false
    const cas = store.compareAndSet.bind(store)
    store.compareAndSet = async (key, record, version) => {
      if (!bumped) {
        bumped = true
        const { version: _, ...current } = (await MemoryTokenStore.prototype.get.call(store, key))!
        await store.set(key, { ...current, data: { touched: true } })
        store.failures = { get: 2 }
      }
      return cas(key, record, version)
    }
    const token = await tokens.getAccessToken('u1')
    const stored = await MemoryTokenStore.prototype.get.call(store, 'u1')
    expect(stored?.accessToken).toBe(token)
    expect(stored?.refreshToken).not.toBe(first.refreshToken)
    expect(stored?.data).toEqual({ touched: true })
    expect(valid(stored)).toBe(true)
  })

  it('a lease release that throws does not block the key for the lease time', async () => {
    const store = new FlakyStore()
    await connect(store, 'u1')
    const tokens = manager(store)
    store.failures = { releaseLease: 2 }
    await tokens.getAccessToken('u1')
    await tokens.close() // waits for the release's retries in the background
    expect(store.calls.releaseLease).toBe(3)
    expect(await store.acquireLease('u1', 'another-process', 1_000)).toBe(true)
  })
})

describe('a slow token endpoint', () => {
  it('an answer slower than the OAuth client time-out is waited for, not resent with the spent token', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1')
    server.setLatency(400, 'success')
    const tokens = createTokenManager({
      oauth: oauth(100), // the client's own time-out: 100 ms
      store,
      retry: { requestTimeoutMs: 5_000, baseDelayMs: 2 },
      lease: { pollMs: 2 },
    })
    const token = await tokens.getAccessToken('u1')
    expect(server.counters.refresh).toBe(1)
    expect(server.counters.reuse).toBe(0)
    expect(valid(await store.get('u1'))).toBe(true)
    expect(server.accountOf(`Bearer ${token}`)).toBe('u1')
  })

  it('a request that timed out is never sent again in the same refresh', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1')
    // A timeout long enough for the request to reach the server on a busy machine, far
    // shorter than the server's answer.
    server.setLatency(5_000, 'success')
    const tokens = manager(store, {
      retry: { attempts: 5, requestTimeoutMs: 750, baseDelayMs: 2 },
    })
    await expect(tokens.getAccessToken('u1')).rejects.toBeInstanceOf(TimeoutError)
    expect(server.counters.refresh).toBe(1)
    expect(server.counters.reuse).toBe(0)
  })

  it('answered failures (503) are still retried', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1')
    server.failNext(503, 503)
    await manager(store).getAccessToken('u1')
    expect(server.counters.refresh).toBe(3)
    expect(valid(await store.get('u1'))).toBe(true)
  })
})

describe('the lease', () => {
  it('is renewed while its holder works: a holder slower than the lease keeps it', async () => {
    const store = new MemoryTokenStore()
    const first = await connect(store, 'u1')
    let taken = 0
    const slow = {
      refresh: async (refreshToken: string) => {
        // Another process tries to take the lease all through a refresh three times its TTL
        // (renewed every third of it: a renewal may come most of a second late and still hold).
        for (let i = 0; i < 30; i++) {
          if (await store.acquireLease('u1', `other-${i}`, 1_000)) taken++
          await new Promise((r) => setTimeout(r, 100))
        }
        return oauth().refresh(refreshToken)
      },
    }
    const tokens = createTokenManager({
      oauth: slow,
      store,
      retry: { attempts: 1, requestTimeoutMs: 100 },
      lease: { ttlMs: 1_000, pollMs: 2 },
    })
    await tokens.getAccessToken('u1')
    expect(taken).toBe(0)
    expect((await store.get('u1'))?.refreshToken).not.toBe(first.refreshToken)
  })

  it('a lease shorter than a refresh with its retries is refused at set-up, with the fix', () => {
    const make = (options: Partial<TokenManagerOptions>) =>
      createTokenManager({ oauth: oauth(), store: new MemoryTokenStore(), ...options })
    expect(() => make({ retry: { requestTimeoutMs: 30_000 } })).toThrow(ConfigError)
    expect(() => make({ retry: { requestTimeoutMs: 30_000 } })).toThrow(
      /a refresh can take 90750 ms .* lease\.ttlMs 60000.*at least 90750/,
    )
    expect(() => make({ lease: { ttlMs: 5_000 } })).toThrow(/lease\.ttlMs 5000/)
    // Fits: one attempt of 5 s in a 5 s lease; any budget without a lease.
    expect(() =>
      make({ lease: { ttlMs: 5_000 }, retry: { attempts: 1, requestTimeoutMs: 5_000 } }),
    ).not.toThrow()
    const plain: TokenStore = new MemoryTokenStore()
    const {
      acquireLease: _,
      releaseLease: __,
      ...noLease
    } = {
      get: plain.get.bind(plain),
      set: plain.set.bind(plain),
      delete: plain.delete.bind(plain),
      acquireLease: undefined,
      releaseLease: undefined,
    }
    expect(() =>
      createTokenManager({ oauth: oauth(), store: noLease, retry: { requestTimeoutMs: 60_000 } }),
    ).not.toThrow()
  })
})

describe('close()', () => {
  it('finishes the refresh under way and its write (through store failures), then refuses new work', async () => {
    const store = new FlakyStore()
    await connect(store, 'u1')
    server.setLatency(200, 'success')
    const tokens = manager(store)
    const inFlight = tokens.getAccessToken('u1')
    await new Promise((r) => setTimeout(r, 50)) // the request is at the server
    store.failures = { compareAndSet: 4 }
    await tokens.close()
    const stored = await store.get('u1')
    expect(await inFlight).toBe(stored?.accessToken)
    expect(valid(stored)).toBe(true)
    await expect(tokens.getAccessToken('u1')).rejects.toBeInstanceOf(ClosedError)
    await expect(tokens.getAccessToken('u1')).rejects.toMatchObject({ code: 'closed' })
  })

  it('gives a write that keeps failing up once its time is out', async () => {
    const store = new FlakyStore()
    await connect(store, 'u1')
    server.setLatency(100, 'success')
    const tokens = manager(store)
    const inFlight = tokens.getAccessToken('u1')
    store.failures = { compareAndSet: 1_000_000 }
    await tokens.close({ timeoutMs: 300 })
    await expect(inFlight).rejects.toThrow(/connection lost/)
  })
})

describe('clocks', () => {
  it('receiptTime: the server Date when it is behind this clock by less than ten minutes', () => {
    const now = Date.parse('2026-11-24T10:00:30.500Z')
    const date = 'Tue, 24 Nov 2026 10:00:00 GMT'
    expect(receiptTime(now, date)).toBe(Date.parse('2026-11-24T10:00:00Z'))
    expect(receiptTime(now, null)).toBe(now)
    expect(receiptTime(now, 'garbage')).toBe(now)
    expect(receiptTime(now - 60_000, date)).toBe(now - 60_000) // our clock is behind: ours
    expect(receiptTime(now + 11 * 60_000, date)).toBe(now + 11 * 60_000) // too far: ours
  })

  it('an instance whose clock runs 30 s ahead writes expiry times the others can trust', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1')
    const ahead = () => Date.now() + 30_000
    const skewed = createTokenManager({ oauth: oauth(undefined, ahead), store, now: ahead })
    const before = Date.now()
    await skewed.getAccessToken('u1')
    const after = Date.now()
    const stored = (await store.get('u1'))!
    // Stamped on the server's clock (whole seconds), not 30 s late.
    expect(stored.expiresAt).toBeLessThanOrEqual(Date.now() + 7_200_000)
    expect(stored.expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7_200_000)
    // An instance with a true clock, just past the real expiry (a 7 200 s token issued by
    // `after`), refreshes instead of handing out the token the API now refuses. Stamped 30 s
    // late, the record would still look valid to it.
    const honest = createTokenManager({
      oauth: oauth(),
      store,
      refreshRatio: 0,
      now: () => after + 7_200_000 + 1_000,
    })
    expect(await honest.getAccessToken('u1')).not.toBe(stored.accessToken)
  })
})
