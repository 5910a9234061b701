import { createServer, request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import type { DeliveryPage, PageNodeRequest } from '../../src/page/options.js'
import { createDeliveryPage } from '../../src/page/page.js'

// The delivery page against what was tried from outside: bodies read before `authorize`, a
// planted anti-forgery cookie, a foreign Origin without Sec-Fetch-Site, free text in the URL,
// entries a store's writer malformed, paths that did not parse, and an authorize that let an
// unset token in. Real HTTP over loopback for the Node path; real Fetch `Request`s for the other.

const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** Serves `page.node`, counting the body bytes the page pulled from each request. */
async function serveCounted(page: DeliveryPage): Promise<{ url: string; pulled: () => number }> {
  let pulled = 0
  const server = createServer((req, res) => {
    const counted: PageNodeRequest = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      async *[Symbol.asyncIterator]() {
        for await (const chunk of req) {
          pulled += (chunk as Buffer).byteLength
          yield chunk as Buffer
        }
      },
    }
    page.node(counted, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push({
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    pulled: () => pulled,
  }
}

/** POSTs `size` bytes in 64 KiB chunks (no Content-Length), resolving with the status. */
function postStream(url: string, size: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      res.resume()
      resolve(res.statusCode!)
      req.destroy()
    })
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error)
    })
    const chunk = Buffer.alloc(64 * 1024, 'a')
    let sent = 0
    const more = () => {
      while (sent < size) {
        sent += chunk.byteLength
        if (!req.write(chunk)) return void req.once('drain', more)
      }
      req.end()
    }
    more()
  })
}

/** A Fetch request whose body is generated as read, counting what was pulled. */
function streamed(url: string, size: number, headers: Record<string, string>) {
  let pulled = 0
  const chunk = new Uint8Array(64 * 1024).fill(97)
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= size) return controller.close()
        pulled += chunk.byteLength
        controller.enqueue(chunk)
      },
    },
    { highWaterMark: 0 },
  )
  const request = new Request(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
  return { request, pulled: () => pulled }
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const admin = (req: { headers: Record<string, unknown> }) =>
  req.headers.authorization === 'Bearer admin'

async function pageWithEntry(options: Record<string, unknown> = {}) {
  const store = new MemoryLedgerStore()
  const ledger = createDeliveryLedger({ store })
  const replays: string[] = []
  const page = createDeliveryPage(ledger, {
    authorize: admin,
    replay: async (id) => {
      replays.push(id)
      return { planned: 1, replayed: 1, queued: 0, failed: 0, skipped: 0, problems: [] }
    },
    ...options,
  })
  return { store, ledger, page, replays }
}

/** The page's token and cookie, as a GET hands them to an allowed browser. */
async function tokenOf(page: DeliveryPage, headers: Record<string, string>) {
  const read = await page.answer({ method: 'GET', url: '/', headers })
  const cookie = read.headers['set-cookie']?.split(';', 1)[0] ?? headers.cookie!
  return { cookie, token: cookie.split('=')[1]! }
}

describe('the delivery page, attacked', () => {
  it('reads no byte of an anonymous body (Node): 16 MiB posted without authorization are refused 403 unread; an allowed one stops at 4 KiB with 413', async () => {
    const { page } = await pageWithEntry()
    const { url, pulled } = await serveCounted(page)
    expect(await postStream(url, 16 * 1024 * 1024, FORM)).toBe(403)
    expect(pulled()).toBe(0)
    const status = await postStream(url, 16 * 1024 * 1024, {
      ...FORM,
      authorization: 'Bearer admin',
    })
    expect(status).toBe(413)
    expect(pulled()).toBeLessThanOrEqual(4096 + 64 * 1024)
    // Announced too large: refused before a byte is read.
    const before = pulled()
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...FORM, authorization: 'Bearer admin', 'content-length': '5000' },
      body: 'x'.repeat(5000),
    })
    expect(res.status).toBe(413)
    expect(pulled()).toBe(before)
  })

  it('reads no byte of an anonymous body (Fetch): 300 MiB posted without authorization pull nothing; an allowed one stops at 4 KiB', async () => {
    const { page } = await pageWithEntry()
    const anonymous = streamed('http://app.test/admin', 300 * 1024 * 1024, FORM)
    expect((await page.fetch(anonymous.request)).status).toBe(403)
    expect(anonymous.pulled()).toBe(0)
    const allowed = streamed('http://app.test/admin', 300 * 1024 * 1024, {
      ...FORM,
      authorization: 'Bearer admin',
    })
    expect((await page.fetch(allowed.request)).status).toBe(413)
    expect(allowed.pulled()).toBeLessThanOrEqual(4096 + 2 * 64 * 1024)
  })

  it('never adopts a planted cookie: any value a request sends, old format or new, is refused; a token signed for another session or by another page too', async () => {
    const { page, replays } = await pageWithEntry()
    const other = (await pageWithEntry()).page
    const post = (cookie: string, csrf: string, extra: Record<string, string> = {}) =>
      page.answer({
        method: 'POST',
        url: '/',
        headers: { ...FORM, authorization: 'Bearer admin', cookie, ...extra },
        body: new URLSearchParams({ replay: 'd1', csrf }).toString(),
      })
    const planted = [
      'f'.repeat(32),
      `${'a'.repeat(32)}.${'b'.repeat(64)}`,
      (await tokenOf(other, { authorization: 'Bearer admin' })).token,
    ]
    for (const value of planted)
      expect((await post(`sk_ledger_csrf=${value}`, value)).status).toBe(403)
    // A GET with a planted cookie is handed a new, signed token instead.
    const read = await page.answer({
      method: 'GET',
      url: '/',
      headers: { authorization: 'Bearer admin', cookie: `sk_ledger_csrf=${'f'.repeat(32)}` },
    })
    expect(read.headers['set-cookie']).toMatch(/^sk_ledger_csrf=[0-9a-f]{32}\.[0-9a-f]{64};/)
    const { cookie, token } = await tokenOf(page, { authorization: 'Bearer admin' })
    // The same cookie sent twice (a sibling host planting a second one) is no token at all.
    expect((await post(`${cookie}; ${cookie}`, token)).status).toBe(403)
    expect(replays).toEqual([])
    expect((await post(cookie, token)).status).toBe(303)
    expect(replays).toEqual(['d1'])

    // Bound to the session authorize names.
    const sessions = (await pageWithEntry({ authorize: sessionOf })).page
    const alice = await tokenOf(sessions, { authorization: 'Bearer alice' })
    const asBob = await sessions.answer({
      method: 'POST',
      url: '/',
      headers: { ...FORM, authorization: 'Bearer bob', cookie: alice.cookie },
      body: new URLSearchParams({ replay: 'd1', csrf: alice.token }).toString(),
    })
    expect(asBob.status).toBe(403)
    const asAlice = await sessions.answer({
      method: 'POST',
      url: '/',
      headers: { ...FORM, authorization: 'Bearer alice', cookie: alice.cookie },
      body: new URLSearchParams({ replay: 'd1', csrf: alice.token }).toString(),
    })
    expect(asAlice.status).toBe(303)
  })

  it("with one secret, a token one instance made holds on another; a rotated-out key's does not", async () => {
    const key = (c: string) => c.repeat(32)
    const one = (await pageWithEntry({ secret: key('a') })).page
    const two = (await pageWithEntry({ secret: [key('b'), key('a')] })).page
    const three = (await pageWithEntry({ secret: key('b') })).page
    const { cookie, token } = await tokenOf(one, { authorization: 'Bearer admin' })
    const post = (page: DeliveryPage) =>
      page.answer({
        method: 'POST',
        url: '/',
        headers: { ...FORM, authorization: 'Bearer admin', cookie },
        body: new URLSearchParams({ replay: 'd1', csrf: token }).toString(),
      })
    expect((await post(two)).status).toBe(303)
    expect((await post(three)).status).toBe(403)
    expect(() =>
      createDeliveryPage(createDeliveryLedger({ store: new MemoryLedgerStore() }), {
        authorize: () => true,
        secret: 'short',
      }),
    ).toThrow(/32 characters/)
  })

  it('without Sec-Fetch-Site, checks Origin, else Referer: a foreign or opaque origin is refused, this host is taken, a request of no browser is left to the token', async () => {
    const { page } = await pageWithEntry()
    const { url } = await serveCounted(page)
    const host = new URL(url).host
    const read = await fetch(url, { headers: { authorization: 'Bearer admin' } })
    const cookie = read.headers.get('set-cookie')!.split(';', 1)[0]!
    const token = cookie.split('=')[1]!
    const post = async (headers: Record<string, string>) =>
      (
        await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { ...FORM, authorization: 'Bearer admin', cookie, ...headers },
          body: new URLSearchParams({ replay: 'd1', csrf: token }).toString(),
        })
      ).status
    expect(await post({ origin: 'https://evil.example' })).toBe(403)
    expect(await post({ origin: 'null' })).toBe(403)
    expect(await post({ origin: `http://${host}.evil.example` })).toBe(403)
    expect(await post({ referer: 'https://evil.example/form' })).toBe(403)
    expect(await post({ origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' })).toBe(
      303,
    )
    expect(await post({ origin: `http://${host}` })).toBe(303)
    expect(await post({ referer: `http://${host}/admin?x=1` })).toBe(303)
    expect(
      await post({ origin: 'https://admin.example', 'x-forwarded-host': 'admin.example' }),
    ).toBe(303)
    expect(await post({})).toBe(303)
    expect(await post({ 'sec-fetch-site': 'cross-site', origin: `http://${host}` })).toBe(403)
  })

  it('shows no free text from the URL: a notice is a code and counts, anything else shows nothing', async () => {
    const { page } = await pageWithEntry()
    const show = async (query: string) => {
      const { body } = await page.answer({
        method: 'GET',
        url: `/?${query}`,
        headers: { authorization: 'Bearer admin' },
      })
      return /<p id="notice">([^<]*)<\/p>/.exec(body)?.[1]
    }
    const phishing = 'Your session expired. Call +1 555 0100 with your password'
    expect(await show(new URLSearchParams({ notice: phishing }).toString())).toBeUndefined()
    expect(
      await show(
        new URLSearchParams({ notice: 'purged', bodies: phishing, entries: '1' }).toString(),
      ),
    ).toBeUndefined()
    expect(await show('notice=replayed')).toMatch(/^Replayed the delivery/)
    expect(await show('notice=purged&bodies=3&entries=2&marks=1&of=account')).toBe(
      'Purged 3 bodies, 1 marks and 2 entries of the account.',
    )
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), async (notice, extra) => {
        const shown = await show(
          new URLSearchParams({ notice, bodies: extra, entries: extra }).toString(),
        )
        if (shown !== undefined) {
          expect(shown).not.toContain(notice.length > 12 ? notice : '\u0000never')
          expect(['replayed', 'queued', 'not-replayed', 'purged']).toContain(notice)
        }
      }),
      { numRuns: 200 },
    )
  })

  it('renders whatever a store writer put in an entry as text: a malformed entry is shown as such, never a 500, and nothing it holds is markup', async () => {
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store })
    const page = createDeliveryPage(ledger, {
      authorize: () => true,
      replay: async () => ({
        planned: 0,
        replayed: 0,
        queued: 0,
        failed: 0,
        skipped: 0,
        problems: [],
      }),
    })
    const now = Date.now()
    const good = {
      id: 'good_1',
      payloadId: 'payload_1',
      type: 'event.created',
      status: 'done',
      attempts: 1,
      source: 'webhook',
      receivedAt: now,
      updatedAt: now,
      resourceId: 'evt_42',
      account: 'acct_7',
    }
    await store.write(good as never, undefined)
    await store.write(
      { ...good, id: 'bad_attempts', attempts: '<img src=x onerror=alert(1)>' } as never,
      undefined,
    )
    await store.write(
      { ...good, id: 'bad_type', type: { toString: null, x: '<b>' } } as never,
      undefined,
    )
    await store.write(
      { ...good, id: 'bad_time', receivedAt: 'yesterday', status: '<i>' } as never,
      undefined,
    )
    const res = await page.answer({ method: 'GET', url: '/', headers: {} })
    expect(res.status).toBe(200)
    expect(res.body).not.toMatch(/<img|<b>|<i>/)
    expect(res.body).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(res.body).toContain('<tr data-id="bad_type" class="malformed">')
    expect(res.body).toContain('malformed: type is not a string')
    expect(res.body).toContain('<td class="event">evt_42</td>')
    expect(res.body).toContain('<td class="account">acct_7</td>')
    // Only the well-formed row has a replay button.
    expect(res.body.match(/class="replay"/g)).toHaveLength(1)
    const listed = JSON.parse(
      (await page.answer({ method: 'GET', url: '/', headers: { accept: 'application/json' } }))
        .body,
    )
    const wrong = Object.fromEntries(
      listed.entries.map((e: { id: string; malformed?: string }) => [e.id, e.malformed]),
    )
    expect(wrong).toEqual({
      good_1: undefined,
      bad_attempts: 'attempts is not a count',
      bad_type: 'type is not a string',
      bad_time: "status is not one of the ledger's",
    })

    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom(
            'id',
            'type',
            'status',
            'attempts',
            'account',
            'resourceId',
            'source',
            'receivedAt',
            'lastError',
            'bodyCapped',
            'body',
          ),
          fc.anything({
            withMap: true,
            withSet: true,
            withBigInt: true,
            withDate: true,
            withNullPrototype: true,
          }),
        ),
        async (fields) => {
          const lone = new MemoryLedgerStore()
          const id = typeof fields.id === 'string' && fields.id !== '' ? fields.id : 'x'
          await lone.write({ ...good, ...fields, id } as never, undefined)
          const one = createDeliveryPage(createDeliveryLedger({ store: lone }), {
            authorize: () => true,
            replay: async () => ({
              planned: 0,
              replayed: 0,
              queued: 0,
              failed: 0,
              skipped: 0,
              problems: [],
            }),
          })
          for (const accept of ['text/html', 'application/json']) {
            const answer = await one.answer({ method: 'GET', url: '/', headers: { accept } })
            expect(answer.status).toBe(200)
            if (accept === 'text/html') {
              const rows = answer.body.slice(
                answer.body.indexOf('<tbody>'),
                answer.body.indexOf('</tbody>'),
              )
              for (const [, tag] of rows.matchAll(/<\/?([a-z]+)/g))
                expect(['tbody', 'tr', 'td', 'form', 'input', 'button']).toContain(tag)
            }
          }
        },
      ),
      { numRuns: 150 },
    )
  })

  it('parses any path before authorize runs: `//`, `/\\\\`, `//evil.example/x` are refused 403 to a stranger and answered 200 to an admin, never 500', async () => {
    const { page } = await pageWithEntry()
    const { url } = await serveCounted(page)
    const origin = url.slice(0, -1)
    for (const path of [
      '//',
      '/\\\\',
      '//evil.example/x?status=dead',
      '///?status=dead&id'.slice(0, -3),
    ]) {
      const raw = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(`${origin}/`, { path, headers }, (res) => {
            res.resume()
            resolve(res.statusCode!)
          })
          req.on('error', reject)
          req.end()
        })
      expect(await raw({})).toBe(403)
      expect(await raw({ authorization: 'Bearer admin' })).toBe(200)
    }
  })

  it('fails closed: only true or a named session lets a request in', async () => {
    for (const verdict of [false, undefined, null, '', 0, 1, 'true'.length, {}, []]) {
      const page = createDeliveryPage(createDeliveryLedger({ store: new MemoryLedgerStore() }), {
        authorize: () => verdict as never,
      })
      expect(
        (await page.answer({ method: 'GET', url: '/', headers: {} })).status,
        String(verdict),
      ).toBe(403)
    }
    for (const verdict of [true, 'session-1']) {
      const page = createDeliveryPage(createDeliveryLedger({ store: new MemoryLedgerStore() }), {
        authorize: () => verdict,
      })
      expect((await page.answer({ method: 'GET', url: '/', headers: {} })).status).toBe(200)
    }
  })
})

/** An authorize that names the session: `Bearer <name>`. */
function sessionOf(req: { headers: Record<string, unknown> }): string | false {
  const value = String(req.headers.authorization ?? '')
  return value.startsWith('Bearer ') ? value.slice(7) : false
}
