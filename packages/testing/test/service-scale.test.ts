// The fake service at 100,000 connected accounts, a webhook each: every request costs what its
// own account holds, never what the service holds. Cost is counted, not timed: `api.examined`
// is the number of webhook records read to answer the lists (a scan of every account's
// webhooks would read 100,000 a request). Real HTTP over loopback, one keep-alive connection.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeSchedulingService, startFakeSchedulingService } from '../src/index.js'

const ACCOUNTS = 100_000
const SAMPLED = 300

let service: FakeSchedulingService
let receiver: ReturnType<typeof createServer>
let hook: string
const received: string[] = []

beforeAll(async () => {
  // Where the deliveries go: an app that records which webhook each came to.
  receiver = createServer((req, res) => {
    received.push(String(req.headers['x-service-webhook-id']))
    req.resume()
    req.on('end', () => res.writeHead(200).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/scheduling`
  service = await startFakeSchedulingService({ retrySchedule: [] })
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = `acct_${i}`
    service.auth.addPersonalAccessToken(`pat_${i}`, account)
    service.registerWebhook({ url: hook, account, id: `wh_${i}` })
  }
}, 120_000)

afterAll(async () => {
  await service?.close()
  await new Promise<void>((resolve) => receiver?.close(() => resolve()))
})

/** A sample of accounts spread over the whole range, the same each run. */
const sample = Array.from({ length: SAMPLED }, (_, n) => (n * 7_919 + 13) % ACCOUNTS)

const api = (path: string, account: number, init: RequestInit = {}) =>
  fetch(`${service.apiUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer pat_${account}`, ...init.headers },
  })

describe(`the fake service at ${ACCOUNTS.toLocaleString('en-US')} accounts`, () => {
  it('each account lists its own webhook, reading only its own record', async () => {
    const before = service.api.examined
    for (const i of sample) {
      const res = await api('/webhooks', i)
      expect(res.status).toBe(200)
      const page = (await res.json()) as { entries: { id: string }[] }
      expect(page.entries.map((w) => w.id)).toEqual([`wh_${i}`])
    }
    // One record a list: what the account holds, whatever the service holds.
    expect(service.api.examined - before).toBe(SAMPLED)
  }, 120_000)

  it("a webhook created over the API joins its account's list, and another account's stays one", async () => {
    const [a, b] = [sample[0]!, sample[1]!]
    const created = await api('/webhooks', a, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: hook }),
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const listA = (await (await api('/webhooks', a)).json()) as { entries: { id: string }[] }
    expect(listA.entries.map((w) => w.id)).toEqual([`wh_${a}`, id])
    const listB = (await (await api('/webhooks', b)).json()) as { entries: { id: string }[] }
    expect(listB.entries.map((w) => w.id)).toEqual([`wh_${b}`])
    // Another account's webhook is not found, and deleting it is refused.
    expect((await api(`/webhooks/${id}`, b)).status).toBe(404)
    expect((await api(`/webhooks/${id}`, b, { method: 'DELETE' })).status).toBe(404)
    expect((await api(`/webhooks/${id}`, a, { method: 'DELETE' })).status).toBe(200)
    const again = (await (await api('/webhooks', a)).json()) as { entries: { id: string }[] }
    expect(again.entries.map((w) => w.id)).toEqual([`wh_${a}`])
    // An id given again is refused; the account's list is as it was.
    expect(() =>
      service.registerWebhook({ url: hook, account: `acct_${b}`, id: `wh_${b}` }),
    ).toThrow(/exists already/)
    const same = (await (await api('/webhooks', b)).json()) as { entries: { id: string }[] }
    expect(same.entries.map((w) => w.id)).toEqual([`wh_${b}`])
    // Created again on the registry itself (the fake's own plumbing), it is replaced: listed
    // once, as the newest, in its account's list and in the whole.
    service.auth.webhooks.create({ url: hook, account: `acct_${b}`, id: `wh_${b}` })
    const replaced = (await (await api('/webhooks', b)).json()) as { entries: { id: string }[] }
    expect(replaced.entries.map((w) => w.id)).toEqual([`wh_${b}`])
    expect(service.webhooks().filter((w) => w.id === `wh_${b}`)).toHaveLength(1)
    expect(service.webhooks().at(-1)?.id).toBe(`wh_${b}`)
  })

  it("an account's event goes to its own webhook only", async () => {
    received.length = 0
    for (const i of sample.slice(0, 20))
      await service.trigger('event.created', { account: `acct_${i}` })
    await service.idle()
    expect(received).toEqual(sample.slice(0, 20).map((i) => `wh_${i}`))
    // A disabled webhook gets nothing; the account's list says so.
    const off = sample[2]!
    service.setWebhookState(`wh_${off}`, 'disabled')
    received.length = 0
    await service.trigger('event.created', { account: `acct_${off}` })
    await service.idle()
    expect(received).toEqual([])
    const listed = (await (await api('/webhooks', off)).json()) as { entries: { state: string }[] }
    expect(listed.entries.map((w) => w.state)).toEqual(['disabled'])
  })

  it("an account's grants are revoked and expired alone", async () => {
    const redirect = 'http://127.0.0.1:9/callback'
    service.allowRedirectUri(redirect)
    const [a, b] = [sample[3]!, sample[4]!]
    const grant = async (i: number) => {
      const res = await fetch(`${service.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: service.auth.issueCode(`acct_${i}`, redirect),
          redirect_uri: redirect,
          client_id: service.clientId,
          client_secret: service.clientSecret,
        }),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }
    const list = (token: string) =>
      fetch(`${service.apiUrl}/webhooks`, { headers: { authorization: `Bearer ${token}` } }).then(
        (r) => r.status,
      )
    const [tokenA, tokenB, tokenA2] = [await grant(a), await grant(b), await grant(a)]
    expect([await list(tokenA), await list(tokenB), await list(tokenA2)]).toEqual([200, 200, 200])
    service.expireToken(`acct_${b}`)
    expect([await list(tokenA), await list(tokenB)]).toEqual([200, 401])
    service.revokeGrant(`acct_${a}`)
    expect([await list(tokenA), await list(tokenA2)]).toEqual([401, 401])
    // The personal tokens of both stay good.
    expect([(await api('/webhooks', a)).status, (await api('/webhooks', b)).status]).toEqual([
      200, 200,
    ])
  })
})
