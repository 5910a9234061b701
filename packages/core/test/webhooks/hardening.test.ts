import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryDedupeStore } from '../../src/claims/dedupe.js'
import { isSchedulingError, serverText, type WebhookError } from '../../src/errors/errors.js'
import type { Logger } from '../../src/log.js'
import type { OAuthRoutesOptions } from '../../src/oauth/options.js'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { defaultStateStore } from '../../src/oauth/settings.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { BodyBudget } from '../../src/webhooks/body/budget.js'
import { isFaithfulText } from '../../src/webhooks/body/read.js'
import { readBody } from '../../src/webhooks/body/streams.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { WebhookLog } from '../../src/webhooks/log.js'
import { resolveSecrets } from '../../src/webhooks/secrets.js'
import { MAX_SIGNATURE_HEADER, parseSignatureHeader } from '../../src/webhooks/signature.js'
import { envelope, sign } from '../helpers.js'

const SECRET = 'hardening-secret'
const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 200)
/** A property's time-out, growing with its runs (`pnpm fuzz` sets 20 000). */
const FUZZ_TIMEOUT = Math.max(20_000, FUZZ_RUNS * 5)

/** What no log line, message or page may carry from a sender (line breaks are the log's own). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u

/** A logger that keeps every line it is given. */
function keeping(): { lines: string[]; logger: Logger } {
  const lines: string[] = []
  const keep = (m: string) => void lines.push(m)
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } }
}

/** The routes' options these tests share; a silent logger unless one is given. */
function routeOptions<Req>(extra: Partial<OAuthRoutesOptions<Req>>): OAuthRoutesOptions<Req> {
  return {
    clientId: 'client-123',
    clientSecret: 'client-secret-xyz',
    redirectUri: 'http://127.0.0.1:9/auth/scheduling/callback',
    authUrl: 'http://127.0.0.1:9',
    tokenStore: new MemoryTokenStore(),
    cookieSecret: 'c'.repeat(32),
    logger: keeping().logger,
    ...extra,
  }
}

describe('signature header parse: linear whatever its shape', () => {
  const hex = 'AB'.repeat(32)

  it('a 1 MiB header of the quadratic shapes is answered through handler.fetch, and refused', async () => {
    const handler = createWebhookHandler(SECRET, { dedupe: false })
    const body = JSON.stringify(envelope())
    for (const signature of [
      `sha256=${' '.repeat(1 << 20)}x`,
      `${'\t'.repeat(1 << 20)}x`,
      `sha256=${' \t'.repeat(1 << 19)}${sign(body, SECRET).slice(7)}x`,
      `${' '.repeat(1 << 20)}sha256=${'\t'.repeat(1 << 20)}`,
    ]) {
      const res = await handler.fetch(
        new Request('http://app.test/webhooks/scheduling', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-signature': signature },
          body,
        }),
      )
      expect(res.status).toBe(401)
    }
  }, 180_000)

  it('the spec forms still parse: prefix in any case or none, spaces and tabs around', () => {
    for (const header of [
      `sha256=${hex}`,
      `SHA256=${hex.toLowerCase()}`,
      hex,
      ` \t sha256=${hex}\t `,
      `\t${hex} `,
    ]) {
      expect(parseSignatureHeader(header), JSON.stringify(header)).toHaveLength(32)
    }
    for (const header of [
      `sha256= ${hex}`,
      `sha256=${hex}x`,
      `\u00a0sha256=${hex}`,
      `sha256=${hex.slice(2)}`,
    ]) {
      expect(parseSignatureHeader(header), JSON.stringify(header)).toBeUndefined()
    }
  })

  it(
    `property: anything longer than ${MAX_SIGNATURE_HEADER} characters is refused, whatever it holds`,
    () => {
      fc.assert(
        fc.property(
          fc.string({ unit: fc.constantFrom(' ', '\t', 'a', '=', 's', 'h', '2', '5', '6') }),
          // Padding both under and over the bound.
          fc.oneof(fc.nat({ max: 80 }), fc.nat({ max: 4096 })),
          (text, pad) => {
            const header = `${' '.repeat(pad)}sha256=${hex}${text}${'\t'.repeat(pad)}`
            const parsed = parseSignatureHeader(header)
            if (header.length > MAX_SIGNATURE_HEADER) expect(parsed).toBeUndefined()
            else {
              // Within the bound, the spec decides: only spaces and tabs may surround the digest.
              let start = 0
              let end = header.length
              while (start < end && (header[start] === ' ' || header[start] === '\t')) start++
              while (end > start && (header[end - 1] === ' ' || header[end - 1] === '\t')) end--
              const accepted = header.slice(start, end) === `sha256=${hex}`
              expect(parsed !== undefined, JSON.stringify(header)).toBe(accepted)
            }
          },
        ),
        { numRuns: FUZZ_RUNS },
      )
    },
    FUZZ_TIMEOUT,
  )
})

describe('one cleaning for sender text', () => {
  it('serverText leaves no control, format or separator character, over every code point', () => {
    // Every code point from U+0000 to U+10FFFF, lone surrogates included, in blocks.
    for (let start = 0; start < 0x110000; start += 0x1000) {
      let text = ''
      for (let cp = start; cp < start + 0x1000; cp++) text += `a${String.fromCodePoint(cp)}`
      const clean = serverText(text, text.length)
      expect(UNSAFE.test(clean), `block U+${start.toString(16)}`).toBe(false)
    }
  })

  const senderText = fc.string({ unit: 'binary', maxLength: 200 })

  it(
    'property: a webhook id reaches no message, log line or answer with an unsafe character',
    async () => {
      const log = new WebhookLog()
      await fc.assert(
        fc.asyncProperty(senderText, async (id) => {
          let error: WebhookError | undefined
          try {
            await resolveSecrets(() => undefined, id, 'x-service-webhook-id')
          } catch (caught) {
            error = caught as WebhookError
          }
          expect(error?.code).toBe('secret_unknown')
          const { lines, logger } = keeping()
          log.report(logger, error!, { webhookId: id, event: undefined })
          for (const text of [error!.message, JSON.stringify(error!.toJSON()), ...lines]) {
            for (const line of text.split('\n')) expect(UNSAFE.test(line)).toBe(false)
          }
        }),
        { numRuns: FUZZ_RUNS },
      )
    },
    FUZZ_TIMEOUT,
  )

  it('through handler.fetch, ESC and C1 controls in a webhook id reach neither the answer nor the log', async () => {
    const { lines, logger } = keeping()
    const handler = createWebhookHandler({ secret: () => undefined, logger })
    const body = JSON.stringify(envelope())
    const res = await handler.fetch(
      new Request('http://app.test/webhooks/scheduling', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': sign(body, SECRET),
          'x-service-webhook-id': 'wh_\x1b[2J\x1b]0;owned\x07\x85\x9b31m',
        },
        body,
      }),
    )
    expect(res.status).toBe(401)
    const text = await res.text()
    expect(text).toContain('secret_unknown')
    expect(lines.length).toBeGreaterThan(0)
    for (const out of [JSON.parse(text).error.message as string, ...lines]) {
      for (const line of out.split('\n')) expect(UNSAFE.test(line), line).toBe(false)
    }
  })

  it(
    'property: an unknown path in handler.fetch is answered 404 with a clean, capped message',
    async () => {
      const handler = createWebhookHandler(SECRET)
      await fc.assert(
        fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (tail) => {
          const res = await handler.fetch(
            new Request(`http://app.test/${encodeURIComponent(tail)}x`, { method: 'POST' }),
          )
          const { error } = (await res.json()) as { error: { message: string } }
          expect(UNSAFE.test(error.message)).toBe(false)
          expect(error.message.length).toBeLessThan(300)
        }),
        { numRuns: FUZZ_RUNS },
      )
    },
    FUZZ_TIMEOUT,
  )
})

describe('sender text in the OAuth routes', () => {
  it(
    'property: a Host header, a query and an iss of any code points reach no log line, page or JSON answer unclean',
    async () => {
      const { lines, logger } = keeping()
      const routes = createOAuthRoutes<null>(
        routeOptions({ authUrl: 'http://127.0.0.1:9', showCauses: true, logger }),
      )
      const text = fc.string({ unit: 'binary', maxLength: 120 })
      await fc.assert(
        fc.asyncProperty(text, text, fc.boolean(), async (host, query, json) => {
          lines.length = 0
          const headers = {
            host: `127.0.0.1${host}`,
            ...(json ? { accept: 'application/json' } : {}),
          }
          const answers = [
            await routes.handle({
              method: 'GET',
              path: '/login',
              headers,
              mountPath: '/auth/scheduling',
              raw: null,
            }),
            await routes.handle({
              method: 'GET',
              path: `/callback?state=s&code=c&iss=${encodeURIComponent(query)}&error_description=${encodeURIComponent(query)}`,
              headers,
              mountPath: '/auth/scheduling',
              raw: null,
            }),
          ]
          for (const out of [...answers.map((a) => a?.body ?? ''), ...lines]) {
            for (const line of out.split('\n')) expect(UNSAFE.test(line), line).toBe(false)
          }
        }),
        { numRuns: FUZZ_RUNS },
      )
    },
    FUZZ_TIMEOUT,
  )
})

describe('bytes as received', () => {
  it('text holding U+FFFD or a lone surrogate is not a faithful copy of any bytes', () => {
    expect(isFaithfulText('{"a":"é☕"}')).toBe(true)
    expect(isFaithfulText('{"a":"\uFFFD"}')).toBe(false)
    expect(isFaithfulText('{"a":"\ud800"}')).toBe(false)
    expect(isFaithfulText('{"a":"\udc00x"}')).toBe(false)
  })

  it('handle() answers 500 body_parsed for text decoded from another charset, with or without a length', async () => {
    const handler = createWebhookHandler(SECRET, { dedupe: false })
    // Signed: "é" as UTF-8 (C3 A9). Sent: one Latin-1 byte (E9), chunked, which a parser
    // honouring the charset decodes to the same text.
    const text = JSON.stringify(envelope('event.created', { note: 'é' }))
    for (const contentType of [
      'application/json; charset=iso-8859-1',
      'application/json;charset="latin1"',
      'application/json; Charset=windows-1252',
    ]) {
      const answer = await handler.handle({
        method: 'POST',
        path: '/webhooks/scheduling',
        headers: { 'content-type': contentType, 'x-service-signature': sign(text, SECRET) },
        body: text,
      })
      expect(answer?.error?.code, contentType).toBe('body_parsed')
    }
    const utf8 = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json; charset=UTF-8',
        'x-service-signature': sign(text, SECRET),
      },
      body: text,
    })
    expect(utf8?.status).toBe(200)
  })

  it('handle() answers 500 body_parsed for decoded text of the same length as the bytes declared', async () => {
    const handler = createWebhookHandler(SECRET)
    const text = JSON.stringify(envelope('event.created', { note: '\uFFFD' }))
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'content-length': String(new TextEncoder().encode(text).length),
        'x-service-signature': sign(text, SECRET),
      },
      body: text,
    })
    expect(answer?.status).toBe(500)
    expect(answer?.error?.code).toBe('body_parsed')
  })
})

describe('bytes held by bodies still arriving', () => {
  async function* slow(chunks: number, size: number, gate: Promise<void>) {
    for (let i = 0; i < chunks; i++) {
      if (i === 1) await gate
      yield new Uint8Array(size)
    }
  }

  it('a body of unknown length takes its chunks as they come, past the budget it is refused, and all is given back', async () => {
    const budget = new BodyBudget(1000)
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const first = readBody(slow(2, 400, gate), 10_000, undefined, 10_000, budget)
    await new Promise((r) => setTimeout(r, 10))
    expect(budget.held).toBe(400)
    // A second body needs 700 more: it is refused at its second chunk.
    const second = readBody(slow(2, 350, Promise.resolve()), 10_000, undefined, 10_000, budget)
    await expect(second).rejects.toMatchObject({ code: 'server_busy', status: 503 })
    expect(budget.held).toBe(400)
    open()
    expect((await first).length).toBe(800)
    expect(budget.held).toBe(0)
  })

  it('refuses a maxPendingBytes below bodyLimit, and one that is not a positive whole number', () => {
    expect(() => createWebhookHandler(SECRET, { bodyLimit: 2048, maxPendingBytes: 1024 })).toThrow(
      /maxPendingBytes \(1024\) must be at least bodyLimit \(2048\)/,
    )
    expect(() => createWebhookHandler(SECRET, { maxPendingBytes: 1.5 })).toThrow(/maxPendingBytes/)
  })
})

describe('used sign-in states are never forgotten within their lifetime', () => {
  it("a store with whenFull: 'refuse' keeps every unexpired key and refuses new ones", () => {
    let now = 0
    const store = new MemoryDedupeStore({ maxEntries: 100, whenFull: 'refuse', now: () => now })
    for (let i = 0; i < 100; i++) {
      expect(store.claim(`k${i}`, 'o')).toBe('claimed')
      store.complete(`k${i}`, 'o')
    }
    let refused: unknown
    try {
      store.claim('k100', 'o')
    } catch (error) {
      refused = error
    }
    expect(isSchedulingError(refused) && refused.code).toBe('store_full')
    expect(store.claim('k0', 'o')).toBe('completed')
    // Expired keys make room again.
    now = 24 * 3600 * 1000 + 1
    expect(store.claim('k100', 'o')).toBe('claimed')
    expect(store.claim('k0', 'o')).toBe('claimed')
  })

  it("the routes' default state store, after 100 000 used sign-ins, still knows the first", () => {
    const store = defaultStateStore(10 * 60 * 1000)
    expect(store.claim('oauth-state:first', 'o')).toBe('claimed')
    store.complete('oauth-state:first', 'o')
    let refused = 0
    for (let i = 0; i < 100_000; i++) {
      try {
        if (store.claim(`oauth-state:${i}`, 'o') === 'claimed')
          store.complete(`oauth-state:${i}`, 'o')
      } catch (error) {
        expect(isSchedulingError(error) && error.code).toBe('store_full')
        refused++
      }
    }
    expect(refused).toBeGreaterThan(0)
    expect(store.claim('oauth-state:first', 'o')).toBe('completed')
  })

  describe('through the routes', () => {
    const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
    let server: TokenServer
    beforeAll(async () => {
      server = await startTokenServer({ redirectUri })
    })
    afterAll(() => server.close())

    it("a flood of sign-ins past the state store's size is refused (state_store_failed); a used state stays used", async () => {
      const routes = createOAuthRoutes<null>(
        routeOptions({
          authUrl: server.url,
          stateStore: new MemoryDedupeStore({ maxEntries: 500, whenFull: 'refuse' }),
        }),
      )
      const request = (path: string, cookie?: string) => ({
        method: 'GET',
        path,
        headers: cookie === undefined ? {} : { cookie, accept: 'application/json' },
        mountPath: '/auth/scheduling',
        raw: null,
      })
      const signIn = async () => {
        const login = (await routes.handle(request('/login')))!
        const cookie = String(login.headers['set-cookie']).split(';')[0]!
        const state = new URL(String(login.headers.location)).searchParams.get('state')!
        return { cookie, state }
      }
      const callback = async ({ cookie, state }: { cookie: string; state: string }) => {
        const answer = await routes.handle(request(`/callback?code=c&state=${state}`, cookie))
        return JSON.parse(answer!.body).error.code as string
      }
      const used = await signIn()
      expect(await callback(used)).toBe('token_exchange_failed')
      const codes: string[] = []
      for (let i = 0; i < 600; i++) codes.push(await callback(await signIn()))
      expect(codes.filter((code) => code === 'state_store_failed')).toHaveLength(101)
      expect(await callback(used)).toMatch(/^state_(used|store_failed)$/)
    })
  })
})

describe('routes.fetch', () => {
  it('answers its own callback when the redirect URI ends with a slash', async () => {
    const routes = createOAuthRoutes<Request>(
      routeOptions({
        redirectUri: 'http://app.test/auth/scheduling/callback/',
        authUrl: 'http://auth.test',
      }),
    )
    const callback = await routes.fetch(
      new Request('http://app.test/auth/scheduling/callback/?code=x&state=y', {
        headers: { accept: 'application/json' },
      }),
    )
    expect(callback.status).toBe(400)
    expect(((await callback.json()) as { error: { code: string } }).error.code).toBe(
      'state_missing',
    )
    const login = await routes.fetch(new Request('http://app.test/auth/scheduling/login'))
    expect(login.status).toBe(302)
    expect(login.headers.get('set-cookie')).toContain('Path=/auth/scheduling;')
  })
})
