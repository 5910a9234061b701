import { createHmac } from 'node:crypto'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { NotConnectedError, ReauthorizationRequiredError } from '../../src/errors/connection.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import type { WebhookSubscriptionsOptions } from '../../src/subscriptions/options.js'
import { MemorySubscriptionStore, type SubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { serveHandler } from '../helpers.js'

const URL_ = 'https://app.example.test/webhooks/scheduling'
let server: TokenServer
let tokens: Map<string, string>
beforeEach(async () => {
  server = await startTokenServer()
  tokens = new Map()
})
afterEach(() => server.close())

/** An account connected at the fake service; its access token served as a token manager would. */
function connect(account: string): string {
  tokens.set(account, server.grant(account).access_token)
  return account
}

const manager = {
  getAccessToken: async (key: string) => {
    const token = tokens.get(key)
    if (token === 'reauth') throw new ReauthorizationRequiredError(key)
    if (token === undefined) throw new Error(`no tokens for ${key}`)
    return token
  },
}

function subscriptions(
  store: SubscriptionStore = new MemorySubscriptionStore(),
  more: Partial<WebhookSubscriptionsOptions> = {},
) {
  return createWebhookSubscriptions({
    url: URL_,
    tokens: manager,
    apiUrl: `${server.url}/v1`,
    store,
    retry: { baseDelayMs: 2, maxDelayMs: 2 },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    ...more,
  })
}

const remote = (account: string) => server.webhooks.all(account)
const live = (account: string) => remote(account).filter((w) => w.state === 'active')

describe('ensure', () => {
  it('creates one webhook at url, keeps its secret; a second ensure creates nothing', async () => {
    const subs = subscriptions()
    connect('acct_1')
    const first = await subs.ensure('acct_1')
    expect(first.created).toBe(true)
    expect(remote('acct_1')).toHaveLength(1)
    const [webhook] = remote('acct_1')
    expect(webhook!.url).toBe(URL_)
    expect(await subs.lookup(webhook!.id)).toMatchObject({
      account: 'acct_1',
      secret: webhook!.secret,
      handle: true,
    })
    const requests = server.webhooks.counters.requests
    expect(await subs.ensure('acct_1')).toEqual({
      webhookId: webhook!.id,
      created: false,
      retired: [],
    })
    expect(server.webhooks.counters.requests - requests).toBe(1) // one GET
    expect(remote('acct_1')).toHaveLength(1)
  })

  it('a disabled or vanished webhook is replaced; the old one deleted and retired', async () => {
    const subs = subscriptions()
    connect('acct_1')
    const { webhookId: first } = await subs.ensure('acct_1')
    server.webhooks.setState(first, 'disabled')
    const second = await subs.ensure('acct_1')
    expect(second).toMatchObject({ created: true, retired: [first] })
    expect(remote('acct_1').map((w) => w.id)).toEqual([second.webhookId])
    server.webhooks.remove(second.webhookId)
    const third = await subs.ensure('acct_1')
    expect(third.created).toBe(true)
    expect(live('acct_1').map((w) => w.id)).toEqual([third.webhookId])
    // Retired ones still verify for the grace period (deliveries on their way).
    expect((await subs.lookup(first))?.account).toBe('acct_1')
  })

  it('a list holding items that are no webhook (null, a number, no id): passed over and told; the disabled webhook is repaired', async () => {
    const warnings: string[] = []
    // The service's answer with junk put among its items, on its way over real HTTP.
    const junked: typeof fetch = async (input, init) => {
      const answer = await fetch(input, init)
      if ((init?.method ?? 'GET') !== 'GET' || !String(input).includes('/webhooks')) return answer
      const body = (await answer.json()) as { entries?: unknown[] }
      if (Array.isArray(body.entries)) body.entries = [null, 7, { url: 'x' }, ...body.entries]
      return new Response(JSON.stringify(body), { status: answer.status, headers: answer.headers })
    }
    const subs = subscriptions(new MemorySubscriptionStore(), {
      fetch: junked,
      logger: {
        debug() {},
        info() {},
        warn: (line: string) => void warnings.push(line),
        error() {},
      },
    })
    connect('acct_junk')
    const { webhookId } = await subs.ensure('acct_junk')
    server.webhooks.setState(webhookId, 'disabled')
    const report = await subs.reconcile()
    expect(report.failed).toEqual([])
    expect(live('acct_junk').map((w) => w.id)).not.toContain(webhookId)
    expect(live('acct_junk')).toHaveLength(1)
    expect(warnings.some((w) => w.includes('3 item(s) for "acct_junk" that are no webhook'))).toBe(
      true,
    )
  })

  it("tokens written by hand (no account in them), then another account's written over them: ensure asks the service whose they are, the old account's deliveries run no handlers and what is left at the service is said, never reported deleted", async () => {
    const changes: { type: string; actions?: string[] }[] = []
    const subs = subscriptions(new MemorySubscriptionStore(), {
      onConnectionChange: (change) => void changes.push(change),
    })
    tokens.set('user-1', server.grant('acct_p').access_token)
    const first = await subs.ensure('user-1')
    expect(await subs.lookup(first.webhookId)).toMatchObject({ account: 'user-1', handle: true })
    // The app's own flow connects the user to another service account, over the same key.
    tokens.set('user-1', server.grant('acct_q').access_token)
    const second = await subs.ensure('user-1')
    expect(second.created).toBe(true)
    expect(live('acct_q').map((w) => w.id)).toEqual([second.webhookId])
    expect(await subs.lookup(first.webhookId)).toMatchObject({ handle: false })
    expect(await subs.lookup(second.webhookId)).toMatchObject({ handle: true })
    // The old webhook is acct_p's: acct_q's token can neither see nor delete it. Said, not hidden.
    expect(live('acct_p').map((w) => w.id)).toEqual([first.webhookId])
    const said = changes.flatMap((c) => c.actions ?? [])
    expect(said).toContainEqual(
      expect.stringMatching(
        new RegExp(`^left ${first.webhookId} at the service \\(of service account acct_p\\)`),
      ),
    )
    expect(second.retired).toEqual([first.webhookId])
  })

  it('the order the docs give for tokens written by hand (remove, write the new tokens, ensure): no webhook left in the old account', async () => {
    const subs = subscriptions()
    tokens.set('user-1', server.grant('acct_p').access_token)
    await subs.ensure('user-1')
    await subs.remove('user-1')
    tokens.set('user-1', server.grant('acct_q').access_token)
    await subs.ensure('user-1')
    expect(live('acct_p')).toEqual([])
    expect(live('acct_q')).toHaveLength(1)
  })

  it('three instances, thirty ensures at once: one webhook at the service', async () => {
    const store = new MemorySubscriptionStore()
    const instances = [subscriptions(store), subscriptions(store), subscriptions(store)]
    connect('acct_1')
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => instances[i % 3]!.ensure('acct_1')),
    )
    expect(remote('acct_1')).toHaveLength(1)
    expect(results.filter((r) => r.created)).toHaveLength(1)
    expect(new Set(results.map((r) => r.webhookId)).size).toBe(1)
  })

  it('a create whose answer was lost (500 after it landed) is found by listing, not repeated blindly', async () => {
    const subs = subscriptions()
    connect('acct_1')
    server.webhooks.failApi({ status: 500, method: 'POST', landed: true })
    const { webhookId } = await subs.ensure('acct_1')
    // The landed one has no secret this app could know (lists do not show it): deleted.
    expect(remote('acct_1').map((w) => w.id)).toEqual([webhookId])
    expect((await subs.lookup(webhookId))?.secret).toBe(remote('acct_1')[0]!.secret)
  })

  it('the store failing between the remote create and the local write leaves no orphan', async () => {
    const store = new MemorySubscriptionStore()
    let failWrites = 0
    const flaky: SubscriptionStore = {
      get: (k) => store.get(k),
      delete: (k, v) => store.delete(k, v),
      findByWebhook: (id) => store.findByWebhook(id),
      keys: () => store.keys(),
      acquireLease: (k, o, t) => store.acquireLease(k, o, t),
      releaseLease: (k, o) => store.releaseLease(k, o),
      compareAndSet: (...args: Parameters<SubscriptionStore['compareAndSet']>) => {
        // The intent write passes; the write after the create fails.
        if (args[1].webhooks.length > 0 && failWrites-- > 0)
          return Promise.reject(new Error('store down'))
        return store.compareAndSet(...args)
      },
    }
    const subs = subscriptions(flaky)
    connect('acct_1')
    failWrites = 1
    await expect(subs.ensure('acct_1')).rejects.toThrow(/store down/)
    expect(remote('acct_1')).toHaveLength(0) // deleted at once
    // Worse: the delete fails too. The orphan stays at the service, and reconcile finds it.
    failWrites = 1
    server.webhooks.failApi({ status: 500, method: 'DELETE', count: 4 })
    await expect(subs.ensure('acct_1')).rejects.toThrow(/store down/)
    expect(remote('acct_1')).toHaveLength(1)
    const orphan = remote('acct_1')[0]!.id
    const report = await subs.reconcile()
    expect(report.accounts[0]).toMatchObject({ key: 'acct_1', outcome: 'repaired' })
    expect(live('acct_1')).toHaveLength(1)
    expect(live('acct_1')[0]!.id).not.toBe(orphan)
    expect((await subs.lookup(live('acct_1')[0]!.id))?.account).toBe('acct_1')
  })
})

describe('remove', () => {
  it('deletes the webhook at the service; deliveries answer without handlers for the grace period', async () => {
    // A clock of the test's own: the grace period ends when the test says, not by the wall.
    let now = Date.now()
    const subs = subscriptions(new MemorySubscriptionStore(), { graceMs: 300, now: () => now })
    connect('acct_1')
    const { webhookId } = await subs.ensure('acct_1')
    expect(await subs.remove('acct_1')).toEqual({ deleted: [webhookId], failed: [] })
    expect(remote('acct_1')).toHaveLength(0)
    expect(await subs.lookup(webhookId)).toMatchObject({ account: 'acct_1', handle: false })
    now += 300
    expect(await subs.lookup(webhookId)).toMatchObject({ account: 'acct_1', handle: false })
    now += 1
    expect(await subs.lookup(webhookId)).toBeUndefined()
    // A reconnection brings a new webhook.
    expect((await subs.ensure('acct_1')).created).toBe(true)
    expect(live('acct_1')).toHaveLength(1)
  })

  it('after the grace period, reconcile forgets a removed account without calling the API', async () => {
    const store = new MemorySubscriptionStore()
    const subs = subscriptions(store, { graceMs: 0 })
    connect('acct_1')
    await subs.ensure('acct_1')
    await subs.remove('acct_1')
    tokens.delete('acct_1') // disconnected: the tokens are gone
    const requests = server.webhooks.counters.requests
    await new Promise((r) => setTimeout(r, 5))
    const report = await subs.reconcile()
    expect(report.accounts).toEqual([
      { key: 'acct_1', outcome: 'removed', actions: ['forgot the removed account'] },
    ])
    expect(server.webhooks.counters.requests).toBe(requests)
    expect(await store.get('acct_1')).toBeUndefined()
    expect((await subs.reconcile()).checked).toBe(0)
  })

  it('a removed account whose webhook the service kept and whose tokens are gone: reported, then forgotten', async () => {
    const store = new MemorySubscriptionStore()
    const subs = subscriptions(store, { graceMs: 0 })
    connect('acct_1')
    await subs.ensure('acct_1')
    server.webhooks.failApi({ status: 503, method: 'DELETE', count: 4 })
    expect((await subs.remove('acct_1')).failed).toHaveLength(1)
    tokens.delete('acct_1')
    await new Promise((r) => setTimeout(r, 5))
    const manager = subscriptions(store, {
      graceMs: 0,
      tokens: {
        getAccessToken: async (key: string) => {
          throw new NotConnectedError(key)
        },
      },
    })
    const report = await manager.reconcile()
    expect(report.notConnected).toEqual(['acct_1'])
    expect(await store.get('acct_1')).toBeUndefined()
  })

  it('a delete the service refuses is reported as failed and done by reconcile later', async () => {
    const subs = subscriptions()
    connect('acct_1')
    const { webhookId } = await subs.ensure('acct_1')
    server.webhooks.failApi({ status: 503, method: 'DELETE', count: 4 })
    expect(await subs.remove('acct_1')).toEqual({ deleted: [], failed: [webhookId] })
    expect(remote('acct_1')).toHaveLength(1)
    const report = await subs.reconcile()
    expect(report.accounts[0]).toMatchObject({ key: 'acct_1', outcome: 'removed' })
    expect(remote('acct_1')).toHaveLength(0)
  })
})

describe('rotate', () => {
  it('creates first, both secrets verify, then deletes the old one', async () => {
    const subs = subscriptions()
    connect('acct_1')
    const { webhookId: old } = await subs.ensure('acct_1')
    const oldSecret = (await subs.lookup(old))!.secret
    const rotated = await subs.rotate('acct_1')
    expect(rotated).toMatchObject({ retired: [old], failed: [] })
    expect(remote('acct_1').map((w) => w.id)).toEqual([rotated.webhookId])
    const fresh = await subs.lookup(rotated.webhookId)
    expect(fresh?.secret).not.toBe(oldSecret)
    expect(await subs.lookup(old)).toMatchObject({ secret: oldSecret, handle: true })
  })

  it('a failed create leaves the old webhook working and the record as it was', async () => {
    const store = new MemorySubscriptionStore()
    const subs = subscriptions(store)
    connect('acct_1')
    const { webhookId } = await subs.ensure('acct_1')
    const before = await store.get('acct_1')
    server.webhooks.failApi({ status: 422, method: 'POST' })
    await expect(subs.rotate('acct_1')).rejects.toMatchObject({ code: 'api_error', status: 422 })
    expect(live('acct_1').map((w) => w.id)).toEqual([webhookId])
    expect(await store.get('acct_1')).toEqual(before)
  })

  it('a failed delete of the old one leaves both working; reconcile deletes it later', async () => {
    const subs = subscriptions()
    connect('acct_1')
    const { webhookId: old } = await subs.ensure('acct_1')
    server.webhooks.failApi({ status: 500, method: 'DELETE', count: 4 })
    const rotated = await subs.rotate('acct_1')
    expect(rotated.failed).toEqual([old])
    expect(live('acct_1')).toHaveLength(2)
    await subs.reconcile()
    expect(live('acct_1').map((w) => w.id)).toEqual([rotated.webhookId])
  })
})

describe('reconcile', () => {
  it('repairs each kind of drift, reports reauthorization without retrying it, keeps good webhooks', async () => {
    const store = new MemorySubscriptionStore()
    const subs = subscriptions(store)
    for (const a of ['ok', 'disabled', 'deleted', 'dropped', 'duplicate', 'reauth']) connect(a)
    const made = new Map<string, string>()
    for (const a of ['ok', 'disabled', 'deleted', 'dropped', 'duplicate', 'reauth'])
      made.set(a, (await subs.ensure(a)).webhookId)
    server.webhooks.setState(made.get('disabled')!, 'disabled')
    server.webhooks.setState(made.get('deleted')!, 'deleted')
    server.webhooks.remove(made.get('dropped')!)
    const stray = server.webhooks.create({ url: URL_, account: 'duplicate' }).id
    tokens.set('reauth', 'reauth')
    const report = await subs.reconcile()
    const outcome = Object.fromEntries(report.accounts.map((a) => [a.key, a.outcome]))
    expect(outcome).toEqual({
      ok: 'ok',
      disabled: 'repaired',
      deleted: 'repaired',
      dropped: 'repaired',
      duplicate: 'repaired',
      reauth: 'reauthorization_required',
    })
    expect(report).toMatchObject({ checked: 6, created: 3, reauthorizationRequired: ['reauth'] })
    expect(live('ok').map((w) => w.id)).toEqual([made.get('ok')])
    expect(live('duplicate').map((w) => w.id)).toEqual([made.get('duplicate')])
    expect(remote('duplicate').some((w) => w.id === stray)).toBe(false)
    for (const a of ['disabled', 'deleted', 'dropped']) {
      expect(live(a)).toHaveLength(1)
      expect(live(a)[0]!.id).not.toBe(made.get(a))
      expect((await subs.lookup(live(a)[0]!.id))?.account).toBe(a)
    }
    expect(report.accounts.find((a) => a.key === 'disabled')!.actions.join(' ')).toMatch(
      new RegExp(`${made.get('disabled')} was disabled`),
    )
    // A second run finds nothing to do.
    const again = await subs.reconcile()
    expect(again.created + again.deleted).toBe(0)
    expect(again.accounts.filter((a) => a.outcome === 'repaired')).toEqual([])
  })

  it('an account whose refresh token is refused: reported once, and later runs do not ask the token endpoint again', async () => {
    const store = new MemoryTokenStore()
    const granted = server.grant('acct_r')
    await store.set('acct_r', {
      accessToken: granted.access_token,
      refreshToken: granted.refresh_token,
      tokenType: 'bearer',
      expiresAt: Date.now() + 3_600_000,
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
    const subs = subscriptions(new MemorySubscriptionStore(), { tokens: manager })
    await subs.ensure('acct_r')
    server.revokeGrant('acct_r')
    const first = await subs.reconcile()
    expect(first.reauthorizationRequired).toEqual(['acct_r'])
    const refreshes = server.counters.refresh
    for (let i = 0; i < 3; i++) {
      expect((await subs.reconcile()).reauthorizationRequired).toEqual(['acct_r'])
    }
    expect(server.counters.refresh).toBe(refreshes)
  })

  it('every instance reconciling at once while accounts connect and disconnect: no duplicates, none missing', async () => {
    const store = new MemorySubscriptionStore()
    const instances = Array.from({ length: 4 }, () => subscriptions(store, { graceMs: 0 }))
    const accounts = Array.from({ length: 12 }, (_, i) => connect(`acct_${i}`))
    await Promise.all(accounts.slice(0, 8).map((a) => instances[0]!.ensure(a)))
    for (const a of accounts.slice(0, 4)) server.webhooks.setState(live(a)[0]!.id, 'disabled')
    await Promise.all([
      ...instances.map((s) => s.reconcile()),
      ...accounts.slice(8).map((a, i) => instances[i % 4]!.ensure(a)),
      instances[1]!.remove('acct_6'),
      instances[2]!.remove('acct_7'),
      ...instances.map((s) => s.reconcile()),
    ])
    await instances[3]!.reconcile()
    for (const a of accounts) {
      const expected = a === 'acct_6' || a === 'acct_7' ? 0 : 1
      expect(live(a), a).toHaveLength(expected)
      expect(
        remote(a).filter((w) => w.state !== 'active'),
        a,
      ).toEqual([])
      if (expected === 1) expect((await instances[0]!.lookup(live(a)[0]!.id))?.account).toBe(a)
    }
  })
})

describe('the handler with subscriptions', () => {
  const sign = (body: string, secret: string) =>
    `sha256=${createHmac('sha256', secret).update(body).digest('hex').toUpperCase()}`
  const envelope = (id: string) =>
    JSON.stringify({ type: 'event.created', id, payload: { id: 'event_1' } })

  async function setUp(graceMs = 60_000, now: () => number = Date.now) {
    const subs = subscriptions(new MemorySubscriptionStore(), { graceMs, now })
    const seen: Array<{ account: string | undefined; id: string }> = []
    const handler = createWebhookHandler({
      subscriptions: subs,
      on: { 'event.created': (e, ctx) => void seen.push({ account: ctx.account, id: e.id }) },
    })
    const served = await serveHandler(handler)
    const send = (
      webhookId: string,
      secret: string,
      id = `payload_${Math.random().toString(36).slice(2)}`,
    ) => {
      const body = envelope(id)
      return fetch(`${served.url}/webhooks/scheduling`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': sign(body, secret),
          'x-service-webhook-id': webhookId,
        },
        body,
      })
    }
    return { subs, seen, served, send }
  }

  it("verifies with the webhook's own secret and names the account; another account's secret is refused", async () => {
    const { subs, seen, served, send } = await setUp()
    try {
      connect('acct_a')
      connect('acct_b')
      const a = await subs.ensure('acct_a')
      const b = await subs.ensure('acct_b')
      const secretA = (await subs.lookup(a.webhookId))!.secret
      const secretB = (await subs.lookup(b.webhookId))!.secret
      expect((await send(a.webhookId, secretA, 'payload_1')).status).toBe(200)
      expect((await send(b.webhookId, secretB, 'payload_1')).status).toBe(200)
      expect(seen).toEqual([
        { account: 'acct_a', id: 'payload_1' },
        { account: 'acct_b', id: 'payload_1' },
      ])
      const crossed = await send(b.webhookId, secretA)
      expect(crossed.status).toBe(401)
      expect((await crossed.json()).error.code).toBe('signature_invalid')
      const unknown = await send('wh_never_made', secretA)
      expect(unknown.status).toBe(401)
      expect((await unknown.json()).error.code).toBe('secret_unknown')
      const bare = await fetch(`${served.url}/webhooks/scheduling`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': sign('{}', secretA) },
        body: '{}',
      })
      expect((await bare.json()).error.code).toBe('secret_unknown')
      expect(seen).toHaveLength(2)
    } finally {
      await served.close()
    }
  })

  it('a subscription store that fails at the lookup: 500, so the service delivers it again; no handler runs', async () => {
    const seen: string[] = []
    const handler = createWebhookHandler({
      subscriptions: {
        lookup: () => Promise.reject(new Error('store down: password=hunter2')),
      },
      onAny: (event) => void seen.push(event.id),
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    const body = envelope('payload_down')
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': sign(body, 'any'),
        'x-service-webhook-id': 'wh_1',
      },
      body: new TextEncoder().encode(body),
    })
    expect(answer!.status).toBe(500)
    expect(JSON.parse(answer!.body).error.code).toBe('handler_failed')
    expect(answer!.body).not.toContain('hunter2')
    expect(seen).toEqual([])
  })

  it('one occurrence delivered to both webhooks during a rotation runs its handlers once', async () => {
    const { subs, seen, served, send } = await setUp()
    try {
      connect('acct_a')
      const old = await subs.ensure('acct_a')
      const oldSecret = (await subs.lookup(old.webhookId))!.secret
      const rotated = await subs.rotate('acct_a')
      const newSecret = (await subs.lookup(rotated.webhookId))!.secret
      expect((await send(old.webhookId, oldSecret, 'payload_rot')).status).toBe(200)
      const second = await send(rotated.webhookId, newSecret, 'payload_rot')
      expect(second.status).toBe(200)
      expect(await second.json()).toEqual({ received: true, duplicate: true })
      expect(seen).toEqual([{ account: 'acct_a', id: 'payload_rot' }])
    } finally {
      await served.close()
    }
  })

  it('a removed account: 200 without handlers during the grace period, 401 after', async () => {
    let now = Date.now()
    const { subs, seen, served, send } = await setUp(200, () => now)
    try {
      connect('acct_a')
      const { webhookId } = await subs.ensure('acct_a')
      const secret = (await subs.lookup(webhookId))!.secret
      await subs.remove('acct_a')
      const late = await send(webhookId, secret)
      expect(late.status).toBe(200)
      expect(await late.json()).toEqual({ received: true, removed: true })
      expect(seen).toEqual([])
      now += 201
      const later = await send(webhookId, secret)
      expect(later.status).toBe(401)
      expect((await later.json()).error.code).toBe('secret_unknown')
    } finally {
      await served.close()
    }
  })

  it('property: any webhook id header, however hostile, is 401 secret_unknown or signature_invalid, never a 5xx, and reaches the store only when it can be an id', async () => {
    const looked: string[] = []
    const store = new MemorySubscriptionStore()
    const subs = subscriptions(store)
    const handler = createWebhookHandler({
      subscriptions: {
        lookup: (id) => {
          looked.push(id)
          return subs.lookup(id)
        },
      },
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    })
    connect('acct_1')
    const { webhookId } = await subs.ensure('acct_1')
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.constantFrom(
            webhookId,
            `${webhookId} `,
            webhookId.toUpperCase(),
            '*',
            '{}',
            'x'.repeat(257),
          ),
        ),
        async (id) => {
          looked.length = 0
          const body = envelope('payload_prop')
          const answer = await handler.handle({
            method: 'POST',
            path: '/webhooks/scheduling',
            headers: {
              'content-type': 'application/json',
              'x-service-signature': sign(body, 'not-the-secret'),
              'x-service-webhook-id': id,
            },
            body: new TextEncoder().encode(body),
          })
          expect(answer!.status).toBe(401)
          expect(['secret_unknown', 'signature_invalid']).toContain(
            JSON.parse(answer!.body).error.code,
          )
          const canBeId = id.length >= 1 && id.length <= 256 && /^[\x21-\x7e]+$/.test(id)
          expect(looked).toEqual(canBeId ? [id] : [])
        },
      ),
      { numRuns: 300 },
    )
  })

  it('refuses secret and subscriptions together, and a subscriptions object that is not one', () => {
    const subs = subscriptions()
    expect(() => createWebhookHandler({ secret: 's', subscriptions: subs })).toThrow(
      /secret or subscriptions, not both/,
    )
    expect(() => createWebhookHandler({ subscriptions: {} as never })).toThrow(
      /createWebhookSubscriptions/,
    )
  })
})

describe('options', () => {
  it('refuse what cannot work, naming the fix', () => {
    const base = {
      url: URL_,
      tokens: manager,
      apiUrl: 'https://api.example.test/v1',
      store: new MemorySubscriptionStore(),
    }
    expect(() => createWebhookSubscriptions({ ...base, url: '/webhooks' })).toThrow(
      /absolute address/,
    )
    expect(() => createWebhookSubscriptions({ ...base, apiUrl: 'api' })).toThrow(/apiUrl/)
    expect(() => createWebhookSubscriptions({ ...base, tokens: {} as never })).toThrow(
      /token manager/,
    )
    expect(() => createWebhookSubscriptions({ ...base, store: { get() {} } as never })).toThrow(
      /it has no compareAndSet, delete, findByWebhook, keys, acquireLease, releaseLease/,
    )
    expect(() => createWebhookSubscriptions({ ...base, graceMs: -1 })).toThrow(/graceMs/)
  })
})
