// No redirect is ever followed by the OAuth client or the API client: a 3xx from the token
// endpoint, the identify call or any API method is an error naming the status and the
// Location's origin; nothing reaches the origin it names, and no answer from there is kept.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import { isSchedulingError } from '../../src/errors/errors.js'
import { RedirectRefusedError } from '../../src/errors/transport.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

interface Hit {
  method: string
  url: string
  body: string
  authorization: string | undefined
}

/** A server recording every request it gets (method, path, body, authorization). */
async function capturing(
  answer: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
): Promise<{ url: string; hits: Hit[]; server: Server }> {
  const hits: Hit[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      hits.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        authorization: req.headers.authorization,
      })
      const a = answer(req.url ?? '/')
      res.writeHead(a.status, a.headers).end(a.body ?? '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server }
}

// What the other origin answers when reached: tokens and a webhook with a secret it chose.
const FOREIGN = JSON.stringify({
  access_token: 'at_foreign',
  refresh_token: 'rt_foreign',
  token_type: 'bearer',
  expires_in: 7200,
  id: 'wh_foreign',
  secret: 'foreign-secret',
  entries: [],
  metadata: { after: null },
})

let foreign: Awaited<ReturnType<typeof capturing>>
let origin: Awaited<ReturnType<typeof capturing>>
let status = 307
let target: 'cross' | 'same' = 'cross'

beforeAll(async () => {
  foreign = await capturing(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: FOREIGN,
  }))
  origin = await capturing(
    (path): { status: number; headers: Record<string, string>; body?: string } =>
      path.startsWith('/moved')
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: FOREIGN }
        : {
            status,
            headers: {
              location: target === 'cross' ? `${foreign.url}/captured${path}` : `/moved${path}`,
            },
          },
  )
})
afterAll(() => {
  foreign.server.close()
  origin.server.close()
})
beforeEach(() => {
  foreign.hits.length = 0
  origin.hits.length = 0
})

const oauth = () =>
  createOAuthClient({
    clientId: 'client_1',
    clientSecret: 'client-secret-1',
    redirectUri: 'https://app.example.test/callback',
    authUrl: origin.url,
  })

async function refusal(promise: Promise<unknown>): Promise<RedirectRefusedError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a refusal, got an answer')
    },
    (e: unknown) => e,
  )
  expect(isSchedulingError(error) && error.code).toBe('redirect_refused')
  return error as RedirectRefusedError
}

/** Nothing reached the other origin, and the redirect's own target was never asked either. */
function nothingFollowed() {
  expect(foreign.hits).toEqual([])
  expect(origin.hits.filter((h) => h.url.startsWith('/moved'))).toEqual([])
}

const cases = [301, 302, 303, 307, 308].flatMap((s) =>
  (['cross', 'same'] as const).map((t) => [s, t] as const),
)

describe.each(cases)('a %i redirect (%s origin)', (s, t) => {
  beforeEach(() => {
    status = s
    target = t
  })

  it('is refused by the code exchange and the refresh, naming the status and origin', async () => {
    const error = await refusal(oauth().exchangeCode('code_1', { codeVerifier: 'v'.repeat(43) }))
    expect(error).toBeInstanceOf(RedirectRefusedError)
    expect(error.message).toContain(String(s))
    expect(error.location).toBe(t === 'cross' ? foreign.url : origin.url)
    expect(error.message).toContain(error.location)
    expect(error.message).not.toMatch(/client-secret-1|code_1|captured/)
    await refusal(oauth().refresh('rt_secret_1'))
    nothingFollowed()
    // The form reached the configured origin only, once each.
    expect(origin.hits.map((h) => h.url)).toEqual(['/oauth/token', '/oauth/token'])
  })

  it('leaves the stored tokens as they were when a refresh is redirected', async () => {
    const store = new MemoryTokenStore()
    const before = {
      accessToken: 'at_old',
      refreshToken: 'rt_old',
      tokenType: 'bearer',
      expiresAt: Date.now() - 1000,
    }
    await store.set('k', before)
    const manager = createTokenManager({ oauth: oauth(), store })
    await refusal(manager.getAccessToken('k'))
    expect(await store.get('k')).toMatchObject(before)
    nothingFollowed()
  })

  it('is refused by the identify call and every webhooks method, bearer sent once', async () => {
    const api = createSchedulingClient({
      baseUrl: `${origin.url}/v1`,
      token: 'pat_secret_1',
      retry: { attempts: 3 },
    })
    await refusal(api.me())
    await refusal(api.webhooks.create({ url: 'https://app.example.test/hooks' }))
    await refusal(api.webhooks.get('wh_1'))
    await refusal(api.webhooks.delete('wh_1'))
    await refusal(
      (async () => {
        for await (const _ of api.webhooks.list()) {
        }
      })(),
    )
    nothingFollowed()
    // Not retried either: each call reached the configured origin once.
    expect(origin.hits.map((h) => `${h.method} ${h.url.split('?')[0]}`)).toEqual([
      'GET /v1/me',
      'POST /v1/webhooks',
      'GET /v1/webhooks/wh_1',
      'DELETE /v1/webhooks/wh_1',
      'GET /v1/webhooks',
    ])
  })
})

it('refuses an answer a custom fetch reached by following a redirect itself', async () => {
  const api = createSchedulingClient({
    baseUrl: `${foreign.url}/v1`,
    token: 'pat_1',
    fetch: async (input, init) => {
      const response = await fetch(input, { ...init, redirect: 'follow' })
      Object.defineProperty(response, 'redirected', { value: true })
      return response
    },
  })
  const error = await refusal(api.webhooks.create({ url: 'https://app.example.test/hooks' }))
  expect(error.location).toBeUndefined()
})
