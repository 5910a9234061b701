import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { NotConnectedError, ReauthorizationRequiredError } from '../../src/errors/connection.js'
import { OAuthError, TimeoutError } from '../../src/errors/transport.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import { newConnection } from '../../src/tokens/connection.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import type { TokenManagerOptions } from '../../src/tokens/options.js'
import type { TokenRecord } from '../../src/tokens/record.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
})
afterEach(() => server.close())

const HOUR = 3_600_000

function oauth() {
  return createOAuthClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    authUrl: server.url,
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

/** Stores tokens the server really issued, with `msLeft` of a `lifetime` remaining. */
async function connect(
  store: TokenStore,
  key: string,
  msLeft: number,
  lifetime = 2 * HOUR,
): Promise<TokenRecord> {
  const granted = server.grant(key)
  const now = Date.now()
  const record: TokenRecord = {
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token,
    tokenType: 'bearer',
    expiresAt: now + msLeft,
    obtainedAt: now + msLeft - lifetime,
    account: { id: key },
  }
  await store.set(key, record)
  return record
}

/** A store with only the three required methods. */
function plainStore(inner = new MemoryTokenStore()): TokenStore {
  return {
    get: (k) => inner.get(k),
    set: (k, r) => inner.set(k, r),
    delete: (k) => inner.delete(k),
  }
}

describe('createTokenManager', () => {
  it('hands out a fresh token without refreshing, however often it is asked', async () => {
    const store = new MemoryTokenStore()
    const stored = await connect(store, 'u1', HOUR)
    const tokens = manager(store)
    for (let i = 0; i < 500; i++) expect(await tokens.getAccessToken('u1')).toBe(stored.accessToken)
    expect(server.counters.refresh).toBe(0)
    expect(tokens.state('u1').status).toBe('fresh')
  })

  it.each([
    ['4 minutes left of 2 hours', 4 * 60_000, 2 * HOUR, 1],
    ['6 minutes left of 2 hours', 6 * 60_000, 2 * HOUR, 0],
    ['2.4 minutes left of 1 hour', 144_000, HOUR, 1],
    ['2.6 minutes left of 1 hour', 156_000, HOUR, 0],
  ])(
    'refreshes ahead of expiry by a margin proportional to the lifetime: %s',
    async (_, left, lifetime, refreshes) => {
      const store = new MemoryTokenStore()
      await connect(store, 'u1', left, lifetime)
      await manager(store).getAccessToken('u1')
      expect(server.counters.refresh).toBe(refreshes)
    },
  )

  it.each([
    ['a store with leases and compare-and-set', () => new MemoryTokenStore()],
    ['a store with only get, set and delete', () => plainStore()],
  ])(
    '200 concurrent calls on an expired token cause exactly one refresh (%s)',
    async (_, makeStore) => {
      const store = makeStore()
      const old = await connect(store, 'u1', -1000)
      const refreshed = vi.fn()
      const tokens = manager(store, { onRefreshed: refreshed })
      server.setLatency(30)
      const results = await Promise.all(
        Array.from({ length: 200 }, () => tokens.getAccessToken('u1')),
      )
      expect(server.counters.refresh).toBe(1)
      expect(new Set(results).size).toBe(1)
      expect(results[0]).not.toBe(old.accessToken)
      const stored = (await store.get('u1'))!
      expect(stored.accessToken).toBe(results[0])
      expect(stored.refreshToken).not.toBe(old.refreshToken)
      expect(stored.account).toEqual({ id: 'u1' })
      expect(refreshed).toHaveBeenCalledOnce()
      expect(refreshed.mock.calls[0]![1]).toMatchObject({ accessToken: results[0] })
      expect(server.counters.reuse).toBe(0)
    },
  )

  it('retries a transient failure with backoff, then succeeds', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1', -1000)
    const failed = vi.fn()
    server.failNext(500, 503)
    const token = await manager(store, { onRefreshFailed: failed }).getAccessToken('u1')
    expect(server.counters.refresh).toBe(3)
    expect(server.counters.refreshOk).toBe(1)
    expect(failed).toHaveBeenCalledTimes(2)
    expect((await store.get('u1'))!.accessToken).toBe(token)
  })

  it('keeps the old refresh token when the token endpoint keeps failing with 500', async () => {
    const store = new MemoryTokenStore()
    const old = await connect(store, 'u1', -1000)
    server.failNext(500, 500, 500)
    const tokens = manager(store)
    const error = await tokens.getAccessToken('u1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OAuthError)
    expect((error as OAuthError).status).toBe(500)
    const kept = (await store.get('u1'))!
    expect(kept.refreshToken).toBe(old.refreshToken)
    expect(kept.reauthorizationRequired).toBeUndefined()
    expect(tokens.state('u1').status).toBe('retry_wait')
    // After the cool-down the stored refresh token still works.
    await new Promise((r) => setTimeout(r, 30))
    const token = await tokens.getAccessToken('u1')
    expect(token).not.toBe(old.accessToken)
    expect(server.counters.refreshOk).toBe(1)
  })

  it('hands out the still-valid token when a refresh ahead of expiry fails', async () => {
    const store = new MemoryTokenStore()
    const old = await connect(store, 'u1', 60_000)
    server.failNext(500, 500, 500)
    // The clock stands still: the cool-down cannot pass between the two calls, however slow
    // the machine is.
    const now = Date.now()
    const tokens = manager(store, { now: () => now })
    expect(await tokens.getAccessToken('u1')).toBe(old.accessToken)
    // Held during the cool-down: no new request to the token endpoint.
    expect(await tokens.getAccessToken('u1')).toBe(old.accessToken)
    expect(server.counters.refresh).toBe(3)
  })

  it('refuses a record made for another app (another token endpoint or API), naming both; its tokens are never refreshed nor handed out', async () => {
    const store = new MemoryTokenStore()
    const record = await connect(store, 'u1', -1000)
    await store.set('u1', {
      ...record,
      app: {
        tokenUrl: 'https://other.example/oauth/token\u001b[2J',
        apiUrl: 'https://api.other.example/v1',
      },
    })
    const app = { tokenUrl: `${server.url}/oauth/token`, apiUrl: 'https://api.example/v1' }
    const tokens = manager(store, { app })
    const error = await tokens.getAccessToken('u1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotConnectedError)
    const message = (error as Error).message
    expect(message).toContain('https://other.example/oauth/token')
    expect(message).toContain(`${server.url}/oauth/token`)
    expect(message).toContain('https://api.other.example/v1')
    expect(message).not.toContain('\u001b')
    expect(server.counters.refresh).toBe(0)
    // A record of this app (or one that names no app, stored before records named it) is used.
    await store.set('u1', { ...record, app })
    expect(await tokens.getAccessToken('u1')).toBeTypeOf('string')
    const { app: _, ...unnamed } = (await store.get('u1'))!
    await store.set('u2', { ...unnamed, expiresAt: Date.now() + HOUR })
    expect(await tokens.getAccessToken('u2')).toBe(unnamed.accessToken)
  })

  it('status(key) of a record the manager refuses (rolled back, another app) says disconnected and why, never the account it names', async () => {
    const store = new MemoryTokenStore()
    const record = await connect(store, 'u1', HOUR)
    const app = { tokenUrl: `${server.url}/oauth/token`, apiUrl: 'https://api.example/v1' }
    const tokens = manager(store, { app, revalidateMs: 0 })
    const newer = newConnection(undefined, Date.now())
    const older = newConnection(undefined, Date.now() - HOUR)
    await store.set('u1', { ...record, connection: newer, account: { id: 'acct_new' } })
    expect(await tokens.getAccessToken('u1')).toBe(record.accessToken)
    expect((await tokens.status('u1')).state).toBe('connected')
    // A restored backup puts the account the user left back.
    await store.set('u1', { ...record, connection: older, account: { id: 'acct_left' } })
    await expect(tokens.getAccessToken('u1')).rejects.toBeInstanceOf(NotConnectedError)
    const rolled = await tokens.status('u1')
    expect(rolled).toEqual({
      key: 'u1',
      state: 'disconnected',
      refused: expect.stringMatching(/rolled back/),
    })
    await store.set('u2', { ...record, app: { ...app, apiUrl: 'https://api.other.example/v1' } })
    const other = await tokens.status('u2')
    expect(other.state).toBe('disconnected')
    expect(other.refused).toContain('https://api.other.example/v1')
    expect(other.accountId).toBeUndefined()
  })

  it('the same tokens stored with an earlier expiry (an app forcing a refresh) are refreshed, not taken for a rolled-back record', async () => {
    const store = new MemoryTokenStore()
    const record = await connect(store, 'u1', HOUR)
    const tokens = manager(store, { revalidateMs: 0 })
    expect(await tokens.getAccessToken('u1')).toBe(record.accessToken)
    await store.set('u1', { ...record, expiresAt: Date.now() - 1_000 })
    const fresh = await tokens.getAccessToken('u1')
    expect(fresh).not.toBe(record.accessToken)
    expect(server.counters.refresh).toBe(1)
  })

  it('marks the record and throws ReauthorizationRequiredError when the refresh token is dead', async () => {
    const store = new MemoryTokenStore()
    const old = await connect(store, 'u1', -1000)
    await oauth().refresh(old.refreshToken) // spent elsewhere: the stored one is now reused
    const onReauth = vi.fn()
    const tokens = manager(store, { onReauthorizationRequired: onReauth })
    const error = await tokens.getAccessToken('u1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReauthorizationRequiredError)
    expect((error as ReauthorizationRequiredError).cause).toBeInstanceOf(OAuthError)
    expect(onReauth).toHaveBeenCalledOnce()
    const marked = (await store.get('u1'))!
    expect(marked.reauthorizationRequired).toBe(true)
    expect(marked.refreshToken).toBe(old.refreshToken)
    // Later calls fail at once, without asking the server again.
    const requests = server.counters.refresh
    await expect(tokens.getAccessToken('u1')).rejects.toBeInstanceOf(ReauthorizationRequiredError)
    expect(server.counters.refresh).toBe(requests)
    // The user connects again: tokens flow again.
    const fresh = await connect(store, 'u1', HOUR)
    expect(await tokens.getAccessToken('u1')).toBe(fresh.accessToken)
  })

  it('recovers from invalid_grant when another process had refreshed (re-reads before giving up)', async () => {
    const shared = new MemoryTokenStore()
    const old = await connect(shared, 'u1', -1000)
    // Process A refreshes first.
    const a = await manager(shared).getAccessToken('u1')
    // Process B reads a stale replica twice (its first look and its re-read), then the truth.
    let staleReads = 2
    const lagging: TokenStore = {
      get: async (k) => (staleReads-- > 0 ? { ...old, version: 1 } : shared.get(k)),
      set: (k, r) => shared.set(k, r),
      delete: (k) => shared.delete(k),
    }
    const onReauth = vi.fn()
    const b = await manager(lagging, { onReauthorizationRequired: onReauth }).getAccessToken('u1')
    expect(server.counters.reuse).toBe(1) // B did spend the old refresh token: invalid_grant
    expect(b).toBe(a)
    expect(onReauth).not.toHaveBeenCalled()
    expect((await shared.get('u1'))!.reauthorizationRequired).toBeUndefined()
  })

  it('waits for the lease holder in another process and takes its tokens, without refreshing', async () => {
    const store = new MemoryTokenStore()
    const old = await connect(store, 'u1', -1000)
    expect(await store.acquireLease('u1', 'other-process', 10_000)).toBe(true)
    setTimeout(async () => {
      const granted = server.grant('u1')
      await store.set('u1', {
        ...old,
        accessToken: granted.access_token,
        refreshToken: granted.refresh_token,
        expiresAt: Date.now() + HOUR,
      })
      await store.releaseLease('u1', 'other-process')
    }, 50)
    const token = await manager(store).getAccessToken('u1')
    expect(token).not.toBe(old.accessToken)
    expect(token).toBe((await store.get('u1'))!.accessToken)
    expect(server.counters.refresh).toBe(0)
  })

  it('gives up waiting for a lease holder that never writes, with TimeoutError', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1', -1000)
    await store.acquireLease('u1', 'stuck-process', 60_000)
    await expect(
      manager(store, { lease: { waitMs: 80, pollMs: 5 } }).getAccessToken('u1'),
    ).rejects.toBeInstanceOf(TimeoutError)
    expect(server.counters.refresh).toBe(0)
  })

  it('does not let a holder whose lease was lost (a failover) overwrite newer tokens', async () => {
    const store = new MemoryTokenStore()
    await connect(store, 'u1', -1000)
    // The leases live in a second store: a failover replaces it with an empty one.
    let leases = new MemoryTokenStore()
    const failingOver: TokenStore = {
      get: (key) => store.get(key),
      set: (key, record) => store.set(key, record),
      delete: (key) => store.delete(key),
      compareAndSet: (key, record, version) => store.compareAndSet(key, record, version),
      acquireLease: (key, owner, ttl) => leases.acquireLease(key, owner, ttl),
      releaseLease: (key, owner) => leases.releaseLease(key, owner),
    }
    server.setLatency(150)
    const slow = manager(failingOver).getAccessToken('u1')
    await new Promise((r) => setTimeout(r, 60))
    expect(await leases.acquireLease('u1', 'someone-else', 1_000)).toBe(false) // held
    leases = new MemoryTokenStore()
    expect(await leases.acquireLease('u1', 'someone-else', 1_000)).toBe(true)
    const reconnected = await connect(store, 'u1', HOUR)
    await leases.releaseLease('u1', 'someone-else')
    const token = await slow
    expect(server.counters.refreshOk).toBe(1) // the slow refresh did happen ...
    const stored = (await store.get('u1'))!
    expect(stored.accessToken).toBe(reconnected.accessToken) // ... but its late write was refused
    expect(token).toBe(reconnected.accessToken)
  })

  it('refreshes once for a token the API refused, and not for one already replaced', async () => {
    const store = new MemoryTokenStore()
    const stored = await connect(store, 'u1', HOUR)
    const tokens = manager(store)
    const [a, b] = await Promise.all([
      tokens.getAccessToken('u1', { rejectedToken: stored.accessToken }),
      tokens.getAccessToken('u1', { rejectedToken: stored.accessToken }),
    ])
    expect(a).toBe(b)
    expect(a).not.toBe(stored.accessToken)
    expect(await tokens.getAccessToken('u1', { rejectedToken: stored.accessToken })).toBe(a)
    expect(server.counters.refresh).toBe(1)
  })

  it('throws NotConnectedError for a key with no tokens', async () => {
    await expect(manager(new MemoryTokenStore()).getAccessToken('nobody')).rejects.toBeInstanceOf(
      NotConnectedError,
    )
  })

  it('refuses a store without the three required methods', () => {
    expect(() =>
      createTokenManager({ oauth: oauth(), store: { get: async () => undefined } as never }),
    ).toThrow(/set/)
  })
})

describe('MemoryTokenStore', () => {
  it('versions every write and refuses a compare-and-set on an old version', async () => {
    const store = new MemoryTokenStore()
    const record: TokenRecord = {
      accessToken: 'a',
      refreshToken: 'r',
      expiresAt: 1,
      tokenType: 'bearer',
    }
    expect(await store.compareAndSet('k', record, undefined)).toBe(true)
    expect((await store.get('k'))!.version).toBe(1)
    expect(await store.compareAndSet('k', { ...record, accessToken: 'b' }, undefined)).toBe(false)
    expect(await store.compareAndSet('k', { ...record, accessToken: 'b' }, 1)).toBe(true)
    await store.set('k', { ...record, accessToken: 'c' })
    expect(await store.compareAndSet('k', { ...record, accessToken: 'd' }, 2)).toBe(false)
    expect((await store.get('k'))!).toMatchObject({ accessToken: 'c', version: 3 })
  })

  it('hands a lease to one owner until it expires; release only by its owner', async () => {
    let now = 0
    const store = new MemoryTokenStore({ now: () => now })
    expect(await store.acquireLease('k', 'a', 100)).toBe(true)
    expect(await store.acquireLease('k', 'b', 100)).toBe(false)
    await store.releaseLease('k', 'b')
    expect(await store.acquireLease('k', 'b', 100)).toBe(false)
    now = 101
    expect(await store.acquireLease('k', 'b', 100)).toBe(true)
    await store.releaseLease('k', 'a') // the old owner cannot release the new owner's lease
    expect(await store.acquireLease('k', 'c', 100)).toBe(false)
    await store.releaseLease('k', 'b')
    expect(await store.acquireLease('k', 'c', 100)).toBe(true)
  })

  it('returns copies: changing a record read does not change the store', async () => {
    const store = new MemoryTokenStore()
    await store.set('k', {
      accessToken: 'a',
      refreshToken: 'r',
      expiresAt: 1,
      tokenType: 'bearer',
      data: { n: 1 },
    })
    const read = (await store.get('k'))!
    read.data!.n = 2
    expect((await store.get('k'))!.data).toEqual({ n: 1 })
  })
})
