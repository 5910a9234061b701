import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, isTransientError } from '../../src/errors/errors.js'
import {
  InvalidResponseError,
  NetworkError,
  OAuthError,
  TimeoutError,
} from '../../src/errors/transport.js'
import { createOAuthClient, type OAuthClientOptions } from '../../src/oauth/client.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

let server: TokenServer
beforeAll(async () => {
  server = await startTokenServer()
})
afterAll(() => server.close())

function client(overrides: Partial<OAuthClientOptions> = {}) {
  return createOAuthClient({
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: server.redirectUri,
    authUrl: server.url,
    ...overrides,
  })
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('createOAuthClient', () => {
  it('builds the authorize URL of section 4, with state', () => {
    const url = new URL(
      client({ authUrl: 'https://auth.example.test/' }).authorizeUrl({ state: 's t&x' }),
    )
    expect(url.origin + url.pathname).toBe('https://auth.example.test/oauth/authorize')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: server.clientId,
      redirect_uri: server.redirectUri,
      state: 's t&x',
    })
    expect(() => client().authorizeUrl({ state: '' })).toThrow(/state/)
  })

  it('exchanges a code with exactly the fields and headers of section 4', async () => {
    const before = Date.now()
    const tokens = await client().exchangeCode(server.issueCode('acct_9'))
    const sent = server.tokenRequests.at(-1)!
    expect(sent.form).toEqual({
      code: expect.any(String),
      client_id: server.clientId,
      client_secret: server.clientSecret,
      grant_type: 'authorization_code',
      redirect_uri: server.redirectUri,
    })
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(sent.headers.accept).toBe('application/json')
    expect(tokens.accessToken).toMatch(/^at_/)
    expect(tokens.refreshToken).toMatch(/^rt_/)
    expect(tokens.tokenType).toBe('bearer')
    // Issued by the server's clock (its Date header, whole seconds) when that is behind ours.
    expect(tokens.expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 7200_000)
    expect(tokens.expiresAt).toBeLessThanOrEqual(Date.now() + 7200_000)
    expect(tokens.obtainedAt! + 7200_000).toBe(tokens.expiresAt)
  })

  it('refreshes with exactly the fields of section 4 and gets a rotated refresh token', async () => {
    const granted = server.grant()
    const tokens = await client().refresh(granted.refresh_token)
    expect(server.tokenRequests.at(-1)!.form).toEqual({
      refresh_token: granted.refresh_token,
      grant_type: 'refresh_token',
      client_id: server.clientId,
      client_secret: server.clientSecret,
    })
    expect(tokens.refreshToken).not.toBe(granted.refresh_token)
  })

  it('computes expiresAt at receipt with the injected clock', async () => {
    const tokens = await client({ now: () => 1_000 }).exchangeCode(server.issueCode())
    expect(tokens.expiresAt).toBe(1_000 + 7200_000)
  })

  it('keeps the old refresh token when a refresh answer has none', async () => {
    const lenient = await startTokenServer({ omitRefreshTokenOnRefresh: true })
    try {
      const granted = lenient.grant()
      const oauth = createOAuthClient({
        clientId: lenient.clientId,
        clientSecret: lenient.clientSecret,
        redirectUri: lenient.redirectUri,
        authUrl: lenient.url,
      })
      expect((await oauth.refresh(granted.refresh_token)).refreshToken).toBe(granted.refresh_token)
    } finally {
      await lenient.close()
    }
  })

  it('throws OAuthError with the server error, description and status', async () => {
    const code = server.issueCode()
    await client().exchangeCode(code)
    const reused = await failure(client().exchangeCode(code))
    expect(reused).toBeInstanceOf(OAuthError)
    expect(reused).toMatchObject({
      error: 'invalid_grant',
      errorDescription: 'bad code',
      status: 400,
    })
    expect(isTransientError(reused)).toBe(false)
    const badClient = await failure(client({ clientSecret: 'wrong-secret-value' }).refresh('rt_x'))
    expect(badClient).toMatchObject({ error: 'invalid_client', status: 401 })
    expect(String((badClient as Error).message)).not.toContain('wrong-secret-value')
    expect(
      await failure(
        client({ redirectUri: 'http://127.0.0.1:9/other' }).exchangeCode(server.issueCode()),
      ),
    ).toMatchObject({
      error: 'invalid_grant',
    })
  })

  it('classifies a 5xx as a transient OAuthError', async () => {
    server.failNext(503)
    const error = await failure(client().refresh(server.grant().refresh_token))
    expect(error).toBeInstanceOf(OAuthError)
    expect(error).toMatchObject({ status: 503, error: 'server_error' })
    expect(isTransientError(error)).toBe(true)
  })

  it('throws NetworkError when nothing answers', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const error = await failure(client({ authUrl: `http://127.0.0.1:${port}` }).refresh('rt_x'))
    expect(error).toBeInstanceOf(NetworkError)
    expect(isTransientError(error)).toBe(true)
    expect((error as Error).message).not.toContain('rt_x')
  })

  it('throws TimeoutError when the server does not answer in time', async () => {
    server.failNext('hang')
    const error = await failure(client({ timeoutMs: 150 }).refresh(server.grant().refresh_token))
    expect(error).toBeInstanceOf(TimeoutError)
    // The client's own 150 ms bound ended it (a hang would be the test's time-out).
    expect((error as Error).message).toMatch(/timed out after 150 ms/)
  })

  it('throws InvalidResponseError for a 200 that is not a token response', async () => {
    server.failNext('malformed')
    expect(await failure(client().refresh(server.grant().refresh_token))).toBeInstanceOf(
      InvalidResponseError,
    )
  })

  it.each([
    ['no access_token', { token_type: 'bearer', expires_in: 7200, refresh_token: 'r' }],
    ['token_type', { access_token: 'a', token_type: 'mac', expires_in: 7200, refresh_token: 'r' }],
    [
      'expires_in',
      { access_token: 'a', token_type: 'bearer', expires_in: 'soon', refresh_token: 'r' },
    ],
    ['expires_in', { access_token: 'a', token_type: 'bearer', expires_in: -5, refresh_token: 'r' }],
    ['no refresh_token', { access_token: 'a', token_type: 'bearer', expires_in: 7200 }],
    ['not a JSON object', [1, 2]],
  ])('rejects a token response with %s', async (problem, body) => {
    const oauth = client({ fetch: async () => Response.json(body) })
    const error = await failure(oauth.exchangeCode('c'))
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect((error as Error).message).toContain(problem)
  })

  it('accepts Bearer in any case and expires_in as a numeric string', async () => {
    const oauth = client({
      now: () => 0,
      fetch: async () =>
        Response.json({
          access_token: 'a',
          token_type: 'Bearer',
          expires_in: '60',
          refresh_token: 'r',
        }),
    })
    expect(await oauth.exchangeCode('c')).toMatchObject({ expiresAt: 60_000, tokenType: 'Bearer' })
  })

  it('refuses a token response over 64 KiB without reading it all', async () => {
    const oauth = client({ fetch: async () => new Response('x'.repeat(200_000)) })
    expect(await failure(oauth.exchangeCode('c'))).toBeInstanceOf(InvalidResponseError)
  })

  it('sends the scope option, a string or a list, on the authorization request only', async () => {
    const scoped = (scope: OAuthClientOptions['scope']) =>
      new URL(client({ scope }).authorizeUrl({ state: 's' })).searchParams
    expect(scoped('read  write').get('scope')).toBe('read write')
    expect(scoped(['read', 'write', 'read']).get('scope')).toBe('read write')
    expect(scoped('offline_access').get('scope')).toBe('offline_access')
    expect(scoped(undefined).has('scope')).toBe(false)
    await client({ scope: 'read write' }).exchangeCode(server.issueCode('acct_scope'))
    expect(Object.keys(server.tokenRequests.at(-1)!.form).sort()).toEqual(
      ['client_id', 'client_secret', 'code', 'grant_type', 'redirect_uri'].sort(),
    )
  })

  it('refuses a scope that is not scope tokens, with the fix', () => {
    for (const bad of ['', '   ', [], ['read write'], ['a"b'], ['back\\slash'], 'tab\there', [7]]) {
      expect(() => client({ scope: bad as never }), JSON.stringify(bad)).toThrow(ConfigError)
    }
    expect(() => client({ scope: 'caf\u00e9' })).toThrow(/scope must be scope tokens/)
    expect(() => client({ scope: '' })).toThrow(/leave the option out/)
  })

  it('property: whatever scope it accepts, the authorize URL holds it as RFC 6749 scope tokens and nothing else', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.stringMatching(/^[ -~\t\u00e9]{0,30}$/),
          fc.array(fc.stringMatching(/^[ -~]{0,8}$/), { maxLength: 5 }),
        ),
        (scope) => {
          let url: URL
          try {
            url = new URL(client({ scope }).authorizeUrl({ state: 's' }))
          } catch (error) {
            expect(error).toBeInstanceOf(ConfigError)
            return
          }
          expect([...url.searchParams.keys()]).toEqual([
            'response_type',
            'client_id',
            'redirect_uri',
            'state',
            'scope',
          ])
          const tokens = url.searchParams.get('scope')!.split(' ')
          for (const token of tokens) expect(token).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]+$/)
          expect(new Set(tokens).size).toBe(tokens.length)
          const asked = typeof scope === 'string' ? scope.split(' ') : scope
          expect(tokens.every((token) => asked.includes(token))).toBe(true)
        },
      ),
    )
  })

  it('keeps the granted scope in the tokens; a refresh answer without one keeps the stored scope', async () => {
    const answers = [
      {
        access_token: 'at_1',
        refresh_token: 'rt_1',
        token_type: 'Bearer',
        expires_in: 7200,
        scope: 'read write',
      },
      { access_token: 'at_2', refresh_token: 'rt_2', token_type: 'bearer', expires_in: 7200 },
    ]
    const oauth = client({ fetch: async () => Response.json(answers.shift()) })
    const first = await oauth.exchangeCode('code')
    expect(first).toMatchObject({ scope: 'read write', tokenType: 'Bearer' })
    const store = new MemoryTokenStore()
    await store.set('k', { ...first, expiresAt: Date.now() - 1 })
    const manager = createTokenManager({ oauth, store })
    expect(await manager.getAccessToken('k')).toBe('at_2')
    expect(await store.get('k')).toMatchObject({ accessToken: 'at_2', scope: 'read write' })
    const unscoped = client({
      fetch: async () =>
        Response.json({
          access_token: 'x',
          refresh_token: 'y',
          token_type: 'bearer',
          expires_in: 1,
        }),
    })
    expect('scope' in (await unscoped.refresh('r'))).toBe(false)
  })

  it('a lifetime under a minute (expires_in 1, or 0.001) is taken as a minute: reads within it make no token call', async () => {
    for (const expiresIn of [1, 0.001]) {
      let calls = 0
      let now = 1_900_000_000_000
      const oauth = client({
        now: () => now,
        fetch: async () => {
          calls++
          return Response.json({
            access_token: `at_${calls}`,
            refresh_token: `rt_${calls}`,
            token_type: 'bearer',
            expires_in: expiresIn,
          })
        },
      })
      const tokens = await oauth.refresh('rt_0')
      expect(tokens.expiresAt - tokens.obtainedAt!).toBe(60_000)
      const store = new MemoryTokenStore()
      await store.set('k', tokens)
      const manager = createTokenManager({ oauth, store, now: () => now })
      for (let i = 0; i < 50; i++) {
        now += 1_000 // 50 s of reads, a second apart
        await manager.getAccessToken('k')
      }
      expect(calls, `expires_in ${expiresIn}`).toBeLessThanOrEqual(2)
    }
  })

  it('refuses options that cannot work', () => {
    expect(() => client({ clientSecret: '' })).toThrow(/clientSecret/)
    expect(() => client({ authUrl: 'auth.example.com' })).toThrow(/absolute URL/)
  })
})
