import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import type { DeliveryPage } from '../../src/page/options.js'
import { createDeliveryPage } from '../../src/page/page.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { deliver, envelope, serveHandler } from '../helpers.js'

// The delivery page over real HTTP: it refuses to exist without authorize, shows nothing to a
// request authorize refuses, escapes every value (markup injected in ids, types, accounts and
// errors), and takes a replay only with its own token from its own page.

const servers: { close(): Promise<void> }[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function servePage(page: DeliveryPage): Promise<string> {
  const server = createServer((req, res) => page.node(req, res))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push({
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

describe('the delivery page', () => {
  it('refuses to be made without authorize', () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    expect(() => createDeliveryPage(ledger, {} as never)).toThrow(/authorize is required/)
  })

  it('shows nothing to a request authorize refuses; lists, filters and replays for one it allows, with its token only', async () => {
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      maxAttempts: 1,
      logger: quiet,
    })
    let broken = true
    const handler = createWebhookHandler({
      secret: 'test-secret',
      ledger,
      logger: quiet,
      onAny: (event) => {
        if (broken && event.type.includes('<b>')) throw new Error('<img src=x onerror=alert(1)>')
      },
    })
    const hooks = await serveHandler(handler)
    servers.push(hooks)
    const failed = envelope('event.<b>created</b>')
    await deliver(hooks.url, JSON.stringify(failed))
    await deliver(hooks.url, JSON.stringify(envelope('event.changed')))
    const page = createDeliveryPage(ledger, {
      authorize: (req) => req.headers.authorization === 'Bearer admin',
      replay: handler.replay,
    })
    const url = await servePage(page)
    const admin = { authorization: 'Bearer admin' }

    const refused = await fetch(url)
    expect(refused.status).toBe(403)
    expect(await refused.text()).not.toContain(failed.id)

    const shown = await fetch(`${url}?status=dead`, { headers: admin })
    expect(shown.status).toBe(200)
    expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'")
    const body = await shown.text()
    expect(body).toContain(failed.id)
    expect(body).not.toContain('event.changed') // filtered out: it is dead only when it failed
    expect(body).not.toContain('<img')
    expect(body).not.toContain('<b>created')
    expect(body).toContain('&lt;img src=x onerror=alert(1)&gt;')
    const cookie = shown.headers.get('set-cookie')!.split(';', 1)[0]!
    const token = cookie.split('=')[1]!

    const post = (form: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${url}?status=dead`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...admin, ...headers },
        body: new URLSearchParams(form).toString(),
      })
    broken = false
    expect((await post({ replay: failed.id, csrf: token }, {})).status).toBe(403) // no cookie
    expect((await post({ replay: failed.id, csrf: 'f'.repeat(32) }, { cookie })).status).toBe(403)
    expect(
      (await post({ replay: failed.id, csrf: token }, { cookie, 'sec-fetch-site': 'cross-site' }))
        .status,
    ).toBe(403)
    expect((await ledger.get(failed.id))?.status).toBe('dead')
    const replayed = await post(
      { replay: failed.id, csrf: token },
      { cookie, 'sec-fetch-site': 'same-origin' },
    )
    expect(replayed.status).toBe(303)
    expect(replayed.headers.get('location')).toBe('?status=dead&notice=replayed')
    expect((await ledger.get(failed.id))?.status).toBe('done')

    // A purge takes the same checks: without the page's token, every body stays.
    const purge = { purge: '1', account: '' }
    expect(body).toContain('id="purge"')
    expect((await post({ ...purge, csrf: 'f'.repeat(32) }, { cookie })).status).toBe(403)
    expect(
      (await post({ ...purge, csrf: token }, { cookie, 'sec-fetch-site': 'cross-site' })).status,
    ).toBe(403)
    expect((await ledger.get(failed.id))?.body).toBeDefined()
    const purged = await post({ ...purge, csrf: token }, { cookie, accept: 'application/json' })
    expect(await purged.json()).toEqual({ bodies: 0, entries: 0, marks: 0 }) // nothing past retention yet
  })

  it("lists the requests answered without a run: a forged one (never recorded), a duplicate; the sender's webhook id escaped; a 409 is no refusal", async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), logger: quiet })
    const handler = createWebhookHandler({ secret: 'test-secret', ledger, logger: quiet })
    const hooks = await serveHandler(handler)
    servers.push(hooks)
    const event = envelope('event.created')
    expect((await deliver(hooks.url, JSON.stringify(event))).status).toBe(200)
    expect((await deliver(hooks.url, JSON.stringify(event))).status).toBe(200) // a retry
    const forged = envelope('event.canceled')
    const refused = await deliver(hooks.url, JSON.stringify(forged), {
      secret: 'not-the-secret',
      webhookId: 'wh_<script>x</script>',
    })
    expect(refused.status).toBe(401)
    expect(await ledger.get(forged.id)).toBeUndefined() // never recorded
    expect(ledger.recent().map((a) => [a.kind, a.status])).toEqual([
      ['refused', 401],
      ['duplicate', 200],
    ])
    const page = createDeliveryPage(ledger, { authorize: () => true })
    const url = await servePage(page)
    const html = await (await fetch(url)).text()
    expect(html).toContain('id="recent"')
    expect(html).toContain('signature_invalid')
    expect(html).toContain(`<td class="id">${event.id}</td>`)
    expect(html).not.toContain('<script>x')
    expect(html).toContain('wh_&lt;script&gt;x&lt;/script&gt;')
    const asJson = (await (
      await fetch(url, { headers: { accept: 'application/json' } })
    ).json()) as {
      recent: { kind: string }[]
    }
    expect(asJson.recent.map((a) => a.kind)).toEqual(['refused', 'duplicate'])
  })

  it('keeps the last 100 answers of each kind, newest first, each field capped: 150 anonymous refusals push out no duplicate, and the page counts what was dropped', async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), logger: quiet })
    const handler = createWebhookHandler({ secret: 'test-secret', ledger, logger: quiet })
    const hooks = await serveHandler(handler)
    servers.push(hooks)
    const event = envelope('event.created')
    await deliver(hooks.url, JSON.stringify(event))
    await deliver(hooks.url, JSON.stringify(event)) // a duplicate, before the flood
    for (let i = 0; i < 150; i++)
      ledger.noteRefused({ status: 401, code: `c${i}` }, 'w'.repeat(500))
    ledger.noteRefused({ status: 409, code: 'delivery_in_progress' })
    const recent = ledger.recent()
    expect(recent).toHaveLength(101)
    expect(recent[0]!.code).toBe('c149')
    expect(recent[99]!.code).toBe('c50')
    expect(recent[100]).toMatchObject({ kind: 'duplicate', id: event.id })
    expect(recent[0]!.webhookId!.length).toBeLessThanOrEqual(65)
    const page = createDeliveryPage(ledger, { authorize: () => true })
    const html = (await page.answer({ method: 'GET', url: '/', headers: {} })).body
    expect(html).toContain('Earlier answers no longer kept: 50 refused, 0 duplicates.')
    const listed = JSON.parse(
      (await page.answer({ method: 'GET', url: '/', headers: { accept: 'application/json' } }))
        .body,
    )
    expect(listed.recentDropped).toEqual({ refused: 50, duplicate: 0 })
  })

  it('a store that fails: answered 500 without its error, which goes to the log with its cause', async () => {
    const store = new MemoryLedgerStore()
    store.list = async () => {
      throw new Error('connection to 10.0.0.5 refused')
    }
    const logged: string[] = []
    const log = {
      debug() {},
      info() {},
      warn() {},
      error: (line: string) => void logged.push(line),
    }
    const page = createDeliveryPage(createDeliveryLedger({ store }), {
      authorize: () => true,
      logger: log,
    })
    const url = await servePage(page)
    const res = await fetch(url)
    expect(res.status).toBe(500)
    expect(await res.text()).not.toContain('10.0.0.5')
    expect(logged.join('\n')).toContain('connection to 10.0.0.5 refused')
  })

  it('property: whatever text an entry holds, the page shows it escaped: only its own tags, every value read back exactly', async () => {
    const store = new MemoryLedgerStore()
    const ledger = createDeliveryLedger({ store })
    const replay = async () => ({
      planned: 0,
      replayed: 0,
      queued: 0,
      failed: 0,
      skipped: 0,
      problems: [],
    })
    const page = createDeliveryPage(ledger, { authorize: () => true, replay })
    const fromHtml = (t: string) =>
      t
        .replaceAll('&lt;', '<')
        .replaceAll('&gt;', '>')
        .replaceAll('&quot;', '"')
        .replaceAll('&#39;', "'")
        .replaceAll('&amp;', '&')
    const ALLOWED = new Set([
      'tbody',
      'tr',
      'td',
      'form',
      'input',
      'button',
      'table',
      'p',
      'a',
      'body',
      'html',
    ])
    await fc.assert(
      fc.asyncProperty(
        fc.string({
          unit: fc.constantFrom('<', '>', '"', "'", '&', 'a', '=', ' ', '/', 'é', '\n'),
        }),
        async (text) => {
          const id = `id_${text}_${Math.random()}`
          const now = Date.now()
          await store.write(
            {
              id,
              payloadId: 'payload_x',
              type: text,
              account: text,
              lastError: text,
              source: 'webhook',
              status: 'failed',
              attempts: 1,
              receivedAt: now,
              updatedAt: now,
            },
            undefined,
          )
          const { body } = await page.answer({
            method: 'GET',
            url: `/?account=${encodeURIComponent(text)}`,
            headers: {},
          })
          const rows = body.slice(body.indexOf('<tbody>'))
          for (const [, tag] of rows.matchAll(/<\/?([a-z]+)/g))
            expect(ALLOWED.has(tag!), tag).toBe(true)
          const row = rows.slice(
            rows.indexOf(
              `data-id="${id.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;')}"`,
            ),
          )
          expect(fromHtml(/<td class="type">([^<]*)<\/td>/.exec(row)![1]!)).toBe(text)
          expect(fromHtml(/<td class="account">([^<]*)<\/td>/.exec(row)![1]!)).toBe(text)
          expect(fromHtml(/<td class="error">([^<]*)<\/td>/.exec(row)![1]!)).toBe(text)
          expect(fromHtml(/name="replay" value="([^"]*)"/.exec(row)![1]!)).toBe(id)
        },
      ),
      { numRuns: 100 },
    )
  })
})
