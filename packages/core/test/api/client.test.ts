import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import { ApiError } from '../../src/errors/api.js'
import { ConfigError } from '../../src/errors/errors.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
})
afterEach(() => server.close())

async function connected(msLeft = 3_600_000) {
  const store = new MemoryTokenStore()
  const granted = server.grant('acct_7')
  await store.set('acct_7', {
    accessToken: granted.access_token,
    refreshToken: granted.refresh_token,
    tokenType: 'bearer',
    expiresAt: Date.now() + msLeft,
  })
  const manager = createTokenManager({
    oauth: createOAuthClient({
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      redirectUri: server.redirectUri,
      authUrl: server.url,
    }),
    store,
  })
  return { store, manager, granted }
}

describe('createSchedulingClient', () => {
  it('calls GET {baseUrl}/me with a personal access token', async () => {
    server.addPersonalAccessToken('pat_live_1', 'acct_pat')
    const api = createSchedulingClient({ baseUrl: `${server.url}/v1/`, token: 'pat_live_1' })
    expect(await api.me()).toMatchObject({ id: 'acct_pat', name: 'User acct_pat' })
    const plain = createSchedulingClient({ baseUrl: server.url, token: 'pat_live_1' })
    expect(await plain.me()).toMatchObject({ id: 'acct_pat' })
    const unknown = createSchedulingClient({ baseUrl: server.url, token: 'pat_unknown' })
    await expect(unknown.me()).rejects.toMatchObject({ status: 401 })
  })

  it('sends Authorization: Bearer and Accept: application/json, and keeps the caller headers', async () => {
    let seen: IncomingHttpHeaders = {}
    const echo = createServer((req, res) => {
      seen = req.headers
      res.writeHead(204).end()
    })
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r))
    try {
      const api = createSchedulingClient({
        baseUrl: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`,
        token: 'pat_1',
      })
      expect(
        await api.request('/webhooks', {
          method: 'POST',
          headers: { 'x-trace': 't1' },
          body: '{}',
        }),
      ).toBeUndefined()
      expect(seen).toMatchObject({
        authorization: 'Bearer pat_1',
        accept: 'application/json',
        'x-trace': 't1',
      })
    } finally {
      echo.close()
    }
  })

  it('uses the token manager for an OAuth connection', async () => {
    const { manager } = await connected()
    const api = createSchedulingClient({ baseUrl: server.url, token: { manager, key: 'acct_7' } })
    expect(await api.me()).toMatchObject({ id: 'acct_7' })
    expect(server.counters.refresh).toBe(0)
  })

  it('on a 401 refreshes once and retries, also for many requests at once', async () => {
    const { manager, granted, store } = await connected()
    server.expireAccessToken(granted.access_token) // revoked early: the stored expiry still says fresh
    const api = createSchedulingClient({ baseUrl: server.url, token: { manager, key: 'acct_7' } })
    const users = await Promise.all(Array.from({ length: 20 }, () => api.me()))
    expect(users.every((u) => (u as { id: string }).id === 'acct_7')).toBe(true)
    expect(server.counters.refresh).toBe(1)
    expect((await store.get('acct_7'))!.accessToken).not.toBe(granted.access_token)
  })

  it('gives up after one retry: ApiError 401 with the parsed body', async () => {
    const { manager } = await connected()
    const api = createSchedulingClient({
      baseUrl: server.url,
      token: { manager, key: 'acct_7' },
      // Every answer is 401, even with fresh tokens.
      fetch: async () => Response.json({ error: 'invalid_token' }, { status: 401 }),
    })
    const error = await api.me().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 401, body: { error: 'invalid_token' } })
    expect(server.counters.refresh).toBe(1)
  })

  it('throws ApiError with status and body for other failures, without the token in its message', async () => {
    const api = createSchedulingClient({ baseUrl: server.url, token: 'pat_secret_value' })
    const error = (await api.request('/nope?x=1').catch((e: unknown) => e)) as ApiError
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(404)
    expect(error.body).toEqual({ error: 'not_found' })
    expect(error.message).toBe(`GET /nope failed with status 404 (${server.url}/nope).`)
    const unauthorized = (await api.me().catch((e: unknown) => e)) as ApiError
    expect(unauthorized.status).toBe(401)
    expect(JSON.stringify({ ...unauthorized, message: unauthorized.message })).not.toContain(
      'pat_secret_value',
    )
  })

  it('refuses a URL in place of a path, so the token never goes to another host', async () => {
    const api = createSchedulingClient({ baseUrl: server.url, token: 'pat_1' })
    for (const path of ['https://evil.test/me', '//evil.test/me', 'me']) {
      await expect(api.request(path)).rejects.toBeInstanceOf(ConfigError)
    }
  })

  it('refuses options that cannot work', () => {
    expect(() => createSchedulingClient({ baseUrl: 'api.example.com', token: 't' })).toThrow(
      /baseUrl/,
    )
    expect(() => createSchedulingClient({ baseUrl: server.url, token: '' })).toThrow(/token/)
  })
})
