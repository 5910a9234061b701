import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSchedulingClient } from '../../src/api/client.js'
import { ApiError, isApiError } from '../../src/errors/api.js'
import { isSchedulingError } from '../../src/errors/errors.js'
import { retryAfterMs } from '../../src/http/retry-after.js'

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
  server.addPersonalAccessToken('pat_a', 'acct_a')
  server.addPersonalAccessToken('pat_b', 'acct_b')
})
afterEach(() => server.close())

/** A client that backs off 1-2 ms, so retries cost no wall time. */
const client = (
  token = 'pat_a',
  more: Parameters<typeof createSchedulingClient>[0]['retry'] = {},
) =>
  createSchedulingClient({
    baseUrl: `${server.url}/v1`,
    token,
    retry: { baseDelayMs: 2, maxDelayMs: 2, ...more },
  })

describe('webhooks API', () => {
  it('create, get, list, delete: the account sees its own webhooks only', async () => {
    const a = client('pat_a')
    const b = client('pat_b')
    const made = await a.webhooks.create({ url: 'https://app.example.test/hook' })
    expect(made).toMatchObject({ url: 'https://app.example.test/hook', state: 'active' })
    expect(made.id).toMatch(/^wh_/)
    expect(typeof made.secret).toBe('string')
    expect(await a.webhooks.get(made.id)).toMatchObject({ id: made.id, state: 'active' })
    expect(await b.webhooks.get(made.id)).toBeUndefined()
    const listed: string[] = []
    for await (const w of a.webhooks.list()) listed.push(w.id)
    expect(listed).toEqual([made.id])
    for await (const _ of b.webhooks.list()) expect.unreachable('acct_b has none')
    expect(await b.webhooks.delete(made.id)).toBeUndefined()
    expect(await a.webhooks.delete(made.id)).toMatchObject({ id: made.id, state: 'deleted' })
    expect(await a.webhooks.delete(made.id)).toBeUndefined()
    expect(await a.webhooks.get(made.id)).toBeUndefined()
  })

  it('lists 250 webhooks over cursor pages, each seen once, at any page size', async () => {
    const ids = new Set<string>()
    for (let i = 0; i < 250; i++)
      ids.add(
        server.webhooks.create({ url: `https://app.example.test/${i}`, account: 'acct_a' }).id,
      )
    for (const limit of [1, 7, 20, 100]) {
      const before = server.webhooks.counters.listed
      const seen: string[] = []
      for await (const w of client().webhooks.list({ limit })) seen.push(w.id)
      expect(seen.length).toBe(250)
      expect(new Set(seen)).toEqual(ids)
      expect(server.webhooks.counters.listed - before).toBe(Math.ceil(250 / limit))
    }
  })

  it('a webhook deleted between two pages neither repeats nor hides another', async () => {
    const ids = Array.from(
      { length: 30 },
      () => server.webhooks.create({ url: 'https://app.example.test/h', account: 'acct_a' }).id,
    )
    const seen: string[] = []
    for await (const w of client().webhooks.list({ limit: 10 })) {
      seen.push(w.id)
      if (seen.length === 10) server.webhooks.remove(ids[9]!) // the cursor's own webhook
    }
    expect(seen).toEqual(ids)
  })

  it('a 422 names the field; the message carries no secret and the error is an ApiError', async () => {
    const error = await client()
      .webhooks.create({ url: 'not a url' })
      .catch((e: unknown) => e)
    expect(isApiError(error, 422)).toBe(true)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).fields).toEqual({ url: ['must be a valid URL'] })
    expect((error as ApiError).message).toContain('url must be a valid URL')
    expect((error as ApiError).message).not.toContain('pat_a')
  })

  it('paginate refuses a limit the service does not allow, and a cursor that loops', async () => {
    await expect(async () => {
      for await (const _ of client().paginate('/webhooks', { limit: 101 })) break
    }).rejects.toThrow(/limit must be a whole number from 1 to 100/)
    const loop = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ entries: [{ id: 'x' }], metadata: { after: 'same' } }))
    })
    await new Promise<void>((r) => loop.listen(0, '127.0.0.1', r))
    try {
      const api = createSchedulingClient({
        baseUrl: `http://127.0.0.1:${(loop.address() as AddressInfo).port}/v1`,
        token: 't',
      })
      const seen: unknown[] = []
      const error = await (async () => {
        for await (const e of api.paginate('/events')) seen.push(e)
      })().catch((e: unknown) => e)
      expect(isSchedulingError(error) && error.code).toBe('invalid_response')
      // The second page starts where the first did: a loop, ended before it is handed out.
      expect((error as Error).message).toMatch(/the list loops/)
      expect(seen).toHaveLength(1)
    } finally {
      loop.close()
    }
  })
})

describe('retries', () => {
  it('429 with Retry-After in seconds: waits and succeeds, whatever the method', async () => {
    server.webhooks.failApi({ status: 429, retryAfter: '0', count: 2 })
    const made = await client().webhooks.create({ url: 'https://app.example.test/h' })
    expect(made.id).toMatch(/^wh_/)
    expect(server.webhooks.counters.byStatus[429]).toBe(2)
    expect(server.webhooks.counters.created).toBe(1)
  })

  it('429 with Retry-After as an HTTP date in the past: retried at once', async () => {
    server.webhooks.failApi({ status: 429, retryAfter: new Date(Date.now() - 5_000).toUTCString() })
    expect(await client().webhooks.get('wh_none')).toBeUndefined()
    expect(server.webhooks.counters.byStatus[429]).toBe(1)
  })

  it('429 without Retry-After backs off; after `attempts` it throws the 429 with its headers', async () => {
    server.webhooks.failApi({ status: 429, count: 10 })
    const error = (await client('pat_a', { attempts: 3 })
      .webhooks.get('wh_x')
      .catch((e: unknown) => e)) as ApiError
    expect(isApiError(error, 429)).toBe(true)
    expect(error.headers['content-type']).toBe('application/json')
    expect(server.webhooks.counters.byStatus[429]).toBe(3)
  })

  it('a Retry-After longer than maxRetryAfterMs is not waited on: thrown at once, saying how long', async () => {
    server.webhooks.failApi({ status: 429, retryAfter: '120', count: 5 })
    const error = (await client('pat_a', { maxRetryAfterMs: 1_000 })
      .webhooks.list()
      [Symbol.asyncIterator]()
      .next()
      .catch((e: unknown) => e)) as ApiError
    expect(error.retryAfterMs).toBe(120_000)
    expect(error.message).toMatch(/asks to wait 120 s/)
    expect(server.webhooks.counters.byStatus[429]).toBe(1)
  })

  it('5xx: GET and DELETE are retried, a POST is not (it may have landed)', async () => {
    const made = await client().webhooks.create({ url: 'https://app.example.test/h' })
    server.webhooks.failApi({ status: 503, count: 2, method: 'GET' })
    expect(await client().webhooks.get(made.id)).toMatchObject({ id: made.id })
    server.webhooks.failApi({ status: 502, method: 'DELETE', landed: true })
    // The first delete landed but answered 502; its retry finds it gone: done, not an error.
    expect(await client().webhooks.delete(made.id)).toBeUndefined()
    expect(server.webhooks.all('acct_a')).toHaveLength(0)
    const createdBefore = server.webhooks.counters.created
    server.webhooks.failApi({ status: 500, method: 'POST', landed: true })
    const error = await client()
      .webhooks.create({ url: 'https://app.example.test/h' })
      .catch((e: unknown) => e)
    expect(isApiError(error, 500)).toBe(true)
    expect(server.webhooks.counters.created - createdBefore).toBe(1)
  })

  it('a time-out on DELETE is retried; one on POST is not', async () => {
    const made = await client().webhooks.create({ url: 'https://app.example.test/h' })
    // The held answers take 3x the client's time-out, and the client's time-out leaves its
    // retry (answered at once) ample room on a busy machine.
    server.webhooks.failApi({ status: 200, method: 'DELETE', delayMs: 1_500, landed: true })
    const api = createSchedulingClient({
      baseUrl: `${server.url}/v1`,
      token: 'pat_a',
      timeoutMs: 500,
      retry: { baseDelayMs: 2, maxDelayMs: 2 },
    })
    const deletes = server.webhooks.counters.requests
    // The retry deletes it, or finds it deleted by the late first try: either way, done.
    expect((await api.webhooks.delete(made.id))?.id ?? made.id).toBe(made.id)
    expect(server.webhooks.counters.requests - deletes).toBeGreaterThanOrEqual(1)
    server.webhooks.failApi({ status: 201, method: 'POST', delayMs: 1_500, landed: true })
    const before = server.webhooks.counters.created
    const error = await api.webhooks.create({ url: 'https://app.example.test/h' }).catch((e) => e)
    expect(isSchedulingError(error) && error.code).toBe('timeout')
    while (server.webhooks.counters.created - before < 1)
      await new Promise((r) => setTimeout(r, 50))
    expect(server.webhooks.counters.created - before).toBe(1)
    expect(server.webhooks.all('acct_a').some((w) => w.id === made.id)).toBe(false)
  })
})

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP dates; anything else is no wait it can use', () => {
    expect(retryAfterMs('3', 0)).toBe(3_000)
    expect(retryAfterMs(' 0 ', 0)).toBe(0)
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.UTC(2015, 9, 21, 7, 27, 50))).toBe(
      10_000,
    )
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.UTC(2016, 0, 1))).toBe(0)
    expect(retryAfterMs(null)).toBeUndefined()
    expect(retryAfterMs('-1')).toBeUndefined()
    expect(retryAfterMs('soon')).toBeUndefined()
  })

  it('property: never negative, never NaN, linear in the header', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 10_000 }), (header) => {
        const ms = retryAfterMs(header, 0)
        expect(ms === undefined || (Number.isFinite(ms) && ms >= 0) || ms === Infinity).toBe(true)
      }),
    )
  })
})
