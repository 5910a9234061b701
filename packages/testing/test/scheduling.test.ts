// createScheduling end to end over loopback HTTP against the fake service: one object configured
// once gives the OAuth routes, the token manager, each account's webhook, a webhook handler and
// an API client per account, all on the same stores.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  ConfigError,
  createDeliveryLedger,
  createOAuthRoutes,
  createScheduling,
  MemoryLedgerStore,
  memoryStores,
  type Scheduling,
  type WebhookQueue,
} from '@scheduling-kit/core'
import { afterEach, describe, expect, it } from 'vitest'
import { completeOAuthFlow, startFakeSchedulingService } from '../src/index.js'

const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** An app serving `scheduling`'s OAuth routes and its webhook handler, made once it listens. */
async function app(configure: (base: string) => Scheduling) {
  let scheduling: Scheduling | undefined
  let routes: ReturnType<typeof createOAuthRoutes> | undefined
  const server = createServer(async (req, res) => {
    if ((req.url ?? '').startsWith('/webhooks/')) {
      const answer = await scheduling!.webhooks.handle({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        headers: req.headers,
        body: req,
      })
      res.writeHead(answer?.status ?? 404, answer?.headers).end(answer?.body)
      return
    }
    const answer = await routes!.fetch(
      new Request(`http://127.0.0.1${req.url}`, { headers: req.headers as HeadersInit }),
      { mountPath: '/auth/scheduling' },
    )
    const headers: Record<string, string | string[]> = {}
    answer.headers.forEach((value, name) => {
      if (name !== 'set-cookie') headers[name] = value
    })
    headers['set-cookie'] = answer.headers.getSetCookie()
    res.writeHead(answer.status, headers).end(await answer.text())
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => new Promise<void>((r) => server.close(() => r())))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  scheduling = configure(base)
  // The object is the routes' options too: given once.
  routes = createOAuthRoutes(scheduling)
  return { base, scheduling }
}

/** The settings every app gives, for the cases that call no service. */
const BASE = {
  clientId: 'c',
  clientSecret: 's',
  redirectUri: 'https://app.example.com/auth/scheduling/callback',
  authUrl: 'https://auth.example.com',
  apiUrl: 'https://api.example.com/v1',
}

describe('createScheduling', () => {
  it('connects an account, gives it its own webhook, routes its deliveries to it, and calls the API for it', async () => {
    const service = await startFakeSchedulingService({ retrySchedule: [] })
    closers.push(() => service.close())
    const stores = memoryStores()
    const accounts: Array<string | undefined> = []
    const changes: string[] = []
    const { base, scheduling } = await app((base) => {
      const settings = service.connectApp(base)
      return createScheduling({
        ...settings,
        webhookUrl: `${base}/webhooks/scheduling`,
        stores,
        cookieSecret: 'a-cookie-secret-of-32-characters!!',
        onConnectionChange: (change) => void changes.push(`${change.type} ${change.key}`),
      })
    })
    scheduling.webhooks.on('event.created', (_event, { account }) => {
      accounts.push(account)
    })

    await completeOAuthFlow(`${base}/auth/scheduling/login`, { account: 'acct_one' })
    // The routes told the one listener.
    expect(changes).toContain('connected acct_one')
    // The token store given once is the one the routes wrote and the manager reads.
    expect((await stores.tokens.get('acct_one'))?.account?.id).toBe('acct_one')
    expect(await scheduling.tokens.status('acct_one')).toMatchObject({
      state: 'connected',
      accountId: 'acct_one',
    })
    // The callback ensured the account's webhook at webhookUrl, through the same subscriptions.
    const hooks = service.webhooks('acct_one')
    expect(hooks.map((w) => w.url)).toEqual([`${base}/webhooks/scheduling`])
    expect((await stores.subscriptions.get('acct_one'))?.webhooks.map((w) => w.id)).toEqual(
      hooks.map((w) => w.id),
    )

    const { deliveries } = await service.trigger('event.created', { account: 'acct_one' })
    expect(deliveries.map((d) => d.status)).toEqual([200])
    expect(accounts).toEqual(['acct_one'])

    const me = await scheduling.client('acct_one').me()
    expect(me.id).toBe('acct_one')
    const health = await scheduling.health()
    expect(health.ok).toBe(true)
    expect(health.checks.map((c) => c.name).sort()).toEqual([
      'dedupe.memory',
      'subscriptions.memory',
      'tokens.memory',
    ])
  })

  it("sweep: true with the ledger: subscriptions.sweep() steps the stores' sweep shards, and an account the ledger saw deliver is passed over as healthy", async () => {
    const service = await startFakeSchedulingService({ retrySchedule: [] })
    closers.push(() => service.close())
    const stores = memoryStores()
    const { base, scheduling } = await app((base) =>
      createScheduling({
        ...service.connectApp(base),
        webhookUrl: `${base}/webhooks/scheduling`,
        stores,
        ledger: true,
        // A period of 1 ms: every account is due at each step after the first.
        sweep: { periodMs: 1, healthyWithin: 3_600_000 },
        cookieSecret: 'a-cookie-secret-of-32-characters!!',
      }),
    )
    scheduling.webhooks.on('event.created', () => {})
    await completeOAuthFlow(`${base}/auth/scheduling/login`, { account: 'acct_one' })
    await completeOAuthFlow(`${base}/auth/scheduling/login`, { account: 'acct_two' })
    const { deliveries } = await service.trigger('event.created', { account: 'acct_one' })
    expect(deliveries.map((d) => d.status)).toEqual([200])
    const subscriptions = scheduling.subscriptions!
    expect(await subscriptions.sweep()).toMatchObject({ shards: 16, due: 0 })
    expect(await stores.sweeps.checkpoint('sweep:0')).toMatchObject({ version: 1 })
    const started = Date.now()
    while (Date.now() < started + 2) await new Promise((resolve) => setImmediate(resolve))
    const report = await subscriptions.sweep()
    expect(report).toMatchObject({ due: 2, healthy: 1, checked: 1 })
    expect(report.accounts.map((a) => [a.key, a.outcome])).toEqual([['acct_two', 'ok']])
  })

  it('runDue() takes up the catch-up run a call left open (its budget spent): the accounts it did not reach are listed, the run closed, the changes the outage lost applied; the next call finds none open', async () => {
    const service = await startFakeSchedulingService({ retrySchedule: [] })
    closers.push(() => service.close())
    const stores = memoryStores()
    const { base, scheduling } = await app((base) =>
      createScheduling({
        ...service.connectApp(base),
        webhookUrl: `${base}/webhooks/scheduling`,
        stores,
        ledger: true,
        cookieSecret: 'a-cookie-secret-of-32-characters!!',
      }),
    )
    const applied: string[] = []
    scheduling.webhooks.on('event.created', (event, { account }) => {
      applied.push(`${account} ${(event.payload as { id: string }).id}`)
    })
    const accounts = Array.from({ length: 6 }, (_, i) => `acct_${i}`)
    for (const account of accounts)
      await completeOAuthFlow(`${base}/auth/scheduling/login`, { account })
    // An outage: each account's new Event never delivered.
    const start = Date.now()
    for (const account of accounts)
      await service.trigger('event.created', {
        account,
        lost: true,
        payload: {
          id: `event_${account}`,
          start_at: new Date(start + 86_400_000).toISOString(),
          end_at: new Date(start + 88_200_000).toISOString(),
        },
      })
    // A catch-up whose budget ends at once: one account listed, the run left open.
    const since = start - 3_600_000
    const first = await scheduling.webhooks.catchUp({
      since,
      progress: stores.sweeps,
      budgetMs: 0,
      concurrency: 1,
    })
    expect(first).toMatchObject({ accounts: 1, fed: 1, unfinished: true, problems: [] })
    const due = await scheduling.runDue()
    expect(due.tasks).toEqual({})
    expect(due.catchUp).toMatchObject({
      accounts: 5,
      resumed: 1,
      fed: 5,
      ran: 5,
      unfinished: false,
      problems: [],
    })
    expect(applied.sort()).toEqual(accounts.map((a) => `${a} event_${a}`).sort())
    // Closed: the next call has no catch-up to go on with.
    expect((await scheduling.runDue()).catchUp).toBeUndefined()
  })

  it("refreshAhead: steps the connected keys on the stores' sweep store; without webhookUrl it needs the keys, and says so", async () => {
    const stores = memoryStores()
    const scheduling = createScheduling({
      ...BASE,
      webhookUrl: 'https://app.example.com/webhooks/scheduling',
      stores,
      refreshAhead: { everyMs: 60_000 },
    })
    const report = await scheduling.refreshAhead!.step()
    expect(report).toMatchObject({ shards: 16, due: 0, refreshed: 0 })
    expect(await stores.sweeps.checkpoint('refresh:0')).toMatchObject({ version: 1 })
    expect(createScheduling({ ...BASE, secret: 's' }).refreshAhead).toBeUndefined()
    expect(() => createScheduling({ ...BASE, secret: 's', refreshAhead: true })).toThrow(
      ConfigError,
    )
    expect(() => createScheduling({ ...BASE, secret: 's', refreshAhead: true })).toThrow(
      /refreshAhead needs the connected keys/,
    )
  })

  it('with one secret instead of webhookUrl: no subscriptions, deliveries verified with the secret', async () => {
    const service = await startFakeSchedulingService({ retrySchedule: [] })
    closers.push(() => service.close())
    const handled: string[] = []
    // connectApp registers the app-wide webhook at <base>/webhooks/scheduling, with its secret.
    const { scheduling } = await app((base) => {
      const { webhookSecret, ...settings } = service.connectApp(base)
      return createScheduling({ ...settings, secret: webhookSecret })
    })
    expect(scheduling.subscriptions).toBeUndefined()
    scheduling.webhooks.on('event.canceled', (event) => {
      handled.push(String(event.id))
    })
    const { event, deliveries } = await service.trigger('event.canceled')
    expect(deliveries.map((d) => d.status)).toEqual([200])
    expect(handled).toEqual([String(event.id)])
  })

  it("ledger: true records every delivery in the stores' ledger store, which health checks instead of the dedupe store", async () => {
    const service = await startFakeSchedulingService({ retrySchedule: [] })
    closers.push(() => service.close())
    const stores = memoryStores()
    let fail = true
    const { scheduling } = await app((base) => {
      const { webhookSecret, ...settings } = service.connectApp(base)
      return createScheduling({
        ...settings,
        secret: webhookSecret,
        stores,
        ledger: { maxAttempts: 1 },
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      })
    })
    const ran: string[] = []
    scheduling.webhooks.on('event.canceled', (event) => {
      ran.push(event.id)
      if (fail) throw new Error('not yet')
    })
    const { event, deliveries } = await service.trigger('event.canceled')
    // The handler failed: dead after the ledger's one attempt, in the bundle's ledger store.
    expect(deliveries.map((d) => d.status)).toEqual([500])
    expect(await stores.ledger.get(String(event.id))).toMatchObject({ status: 'dead', attempts: 1 })
    expect(scheduling.ledger?.store).toBe(stores.ledger)
    fail = false
    expect(await scheduling.webhooks.replay(String(event.id))).toMatchObject({ replayed: 1 })
    expect(ran).toHaveLength(2)
    expect(await scheduling.ledger?.get(String(event.id))).toMatchObject({ status: 'done' })
    const health = await scheduling.health()
    expect(health.checks.map((c) => c.name).sort()).toEqual(['ledger.memory', 'tokens.memory'])
  })

  it("a ledger made apart is taken as it is; a queue is the handler's and is in health", async () => {
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    const queued: string[] = []
    let queueUp = true
    const queue: WebhookQueue = {
      enqueue: (event) => void queued.push(event.id),
      health: async () => ({
        ok: queueUp,
        checks: [{ name: 'fifo', ok: queueUp, ms: 0 }],
      }),
    }
    const scheduling = createScheduling({ ...BASE, secret: 'whsec_apart', ledger, queue })
    expect(scheduling.ledger).toBe(ledger)
    expect(scheduling.queue).toBe(queue)
    const health = await scheduling.health()
    expect(health.checks.map((c) => c.name).sort()).toEqual([
      'ledger.memory',
      'queue.fifo',
      'tokens.memory',
    ])
    queueUp = false
    expect((await scheduling.health()).ok).toBe(false)
  })

  it('refuses a ledger or a queue that cannot work, naming the fix', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ledger: 5 }, /ledger is true, the options of createDeliveryLedger/],
      [{ ledger: null }, /ledger is true/],
      [
        { ledger: { store: new MemoryLedgerStore() } },
        /give the store there .*stores\.ledger|records in stores\.ledger/,
      ],
      [{ ledger: { maxAttempts: 0 } }, /maxAttempts/],
      [{ queue: {} }, /queue must have enqueue\(\)/],
    ]
    for (const [extra, message] of cases) {
      const make = () => createScheduling({ ...BASE, secret: 'x', ...(extra as object) })
      expect(make).toThrow(ConfigError)
      expect(make).toThrow(message)
    }
  })

  it('refuses an app that gives neither webhookUrl nor secret, or both, naming the fix', () => {
    const base = BASE
    for (const extra of [{}, { webhookUrl: 'https://app.example.com/w', secret: 'x' }]) {
      const make = () => createScheduling({ ...base, ...extra })
      expect(make).toThrow(ConfigError)
      expect(make).toThrow(/webhookUrl .* or secret/)
    }
    expect(() => createScheduling({ ...base, apiUrl: '', secret: 'x' })).toThrow(/apiUrl/)
  })
})
