// Two processes connecting, reconnecting, disconnecting, ensuring and reconciling one key, in
// every interleaving fast-check's scheduler finds: the OAuth routes, the token managers and the
// subscriptions are the real ones, over a real token server and webhook API; only the order in
// which their HTTP answers arrive is chosen. Each process has its own store objects over shared
// data (one process's announcements do not reach the other). Whatever the order, once the dust
// settles and one reconcile ran, the webhooks agree with the stored connection: one working
// webhook of ours in the connected account, none anywhere else; and only the browser whose
// connection is stored is recognised.
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FetchLike } from '../../src/http/fetch.js'
import { createOAuthClient } from '../../src/oauth/client.js'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { MemorySubscriptionStore, type SubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { createTokenManager } from '../../src/tokens/manager.js'
import { MemoryTokenStore, type TokenStore } from '../../src/tokens/store.js'

const URL_ = 'https://app.example.test/webhooks/scheduling'
const REDIRECT = 'https://app.example.test/auth/scheduling/callback'
const KEY = 'user-1'
const quiet = { debug() {}, info() {}, warn() {}, error() {} }

let server: TokenServer
beforeAll(async () => {
  server = await startTokenServer({ redirectUri: REDIRECT })
})
afterAll(() => server.close())

/** Another object over the same store: what a second process's own client is. */
function ownClient<S extends object>(store: S): S {
  const view = {} as S
  let proto: object | null = store
  while (proto !== null && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const value = (store as Record<string, unknown>)[name]
      if (name !== 'constructor' && typeof value === 'function' && !(name in view))
        (view as Record<string, unknown>)[name] = value.bind(store)
    }
    proto = Object.getPrototypeOf(proto)
  }
  return view
}

type Op = 'connect_p' | 'connect_q' | 'disconnect' | 'ensure' | 'reconcile'

/** What the browsers did: each connection's cookie and nonce, the writes' order, the disconnects' targets. */
interface History {
  browsers: { cookie: string; nonce: string }[]
  written: string[]
  targeted: Set<string>
}

/**
 * The token store as a process sees it: each answer arrives when the scheduler says (a round
 * trip to Redis or PostgreSQL), and every connection written is recorded in order.
 */
function recording(s: fc.Scheduler, store: TokenStore, history: History): TokenStore {
  const view = ownClient(store)
  const { get, set, compareAndSet, compareAndDelete } = view
  view.get = (key) => s.schedule(get(key), 'token get')
  view.set = async (key, record) => {
    await set(key, record)
    if (record.connection !== undefined) history.written.push(record.connection)
    await s.schedule(Promise.resolve(), 'token set')
  }
  view.compareAndSet = async (key, record, version) => {
    const written = await compareAndSet!(key, record, version)
    if (written && record.connection !== undefined) history.written.push(record.connection)
    await s.schedule(Promise.resolve(), 'token compare-and-set')
    return written
  }
  view.compareAndDelete = (key, version) =>
    s.schedule(compareAndDelete!(key, version), 'token compare-and-delete')
  return view
}

/** One process of the app: its routes, manager and subscriptions, its HTTP answers scheduled. */
function processOf(
  s: fc.Scheduler,
  tokenStore: TokenStore,
  subscriptionStore: SubscriptionStore,
  history: History,
  schedule = true,
) {
  const scheduled: FetchLike = (input, init) =>
    schedule
      ? s.schedule(
          fetch(input, init),
          `${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`,
        )
      : fetch(input, init)
  const oauth = {
    clientId: server.clientId,
    clientSecret: server.clientSecret,
    redirectUri: REDIRECT,
    authUrl: server.url,
    apiUrl: `${server.url}/v1`,
    fetch: scheduled,
  }
  const tokens = createTokenManager({ oauth: createOAuthClient(oauth), store: tokenStore })
  const subscriptions = createWebhookSubscriptions({
    url: URL_,
    apiUrl: `${server.url}/v1`,
    tokens,
    store: subscriptionStore,
    fetch: scheduled,
    retry: { attempts: 1 },
    logger: quiet,
  })
  const withSubs = createOAuthRoutes({
    ...oauth,
    tokenStore,
    cookieSecret: 'interleavings-cookie-secret-0123456789',
    logger: quiet,
    key: () => KEY,
    subscriptions,
    onConnected: ({ record, request }) => {
      ;(request as { nonce?: string }).nonce = record.connection
    },
  })
  const call = (method: string, path: string, cookie = '', raw: { nonce?: string } = {}) =>
    withSubs.handle({
      method,
      path,
      headers: { cookie, origin: 'https://app.example.test', accept: 'application/json' },
      mountPath: '/auth/scheduling',
      raw,
    })
  async function connect(account: string): Promise<void> {
    const login = (await call('GET', '/login'))!
    const cookie = [login.headers['set-cookie']]
      .flat()
      .map((c) => String(c).split(';', 1)[0])
      .join('; ')
    const authorize = new URL(String(login.headers.location))
    const code = server.issueCode(
      account,
      REDIRECT,
      authorize.searchParams.get('code_challenge') ?? undefined,
    )
    const raw: { nonce?: string } = {}
    const back = await call(
      'GET',
      `/callback?code=${code}&state=${authorize.searchParams.get('state')}`,
      cookie,
      raw,
    )
    const set = [back!.headers['set-cookie']].flat().map((c) => String(c).split(';', 1)[0])
    const connection = set.find((c) => c!.includes('scheduling_connection=') && !c!.endsWith('='))
    if (back!.status < 400 && connection !== undefined && raw.nonce !== undefined)
      history.browsers.push({ cookie: connection, nonce: raw.nonce })
  }
  async function run(op: Op): Promise<void> {
    if (op === 'connect_p') return connect('acct_p')
    if (op === 'connect_q') return connect('acct_q')
    if (op === 'disconnect') {
      // The browser that connected last, as far as this process heard.
      const browser = history.browsers.at(-1)
      if (browser === undefined) return
      history.targeted.add(browser.nonce)
      await call('POST', '/disconnect', browser.cookie)
      return
    }
    if (op === 'ensure') {
      await subscriptions.ensure(KEY)
      return
    }
    await subscriptions.reconcile()
  }
  return { run, subscriptions, routes: withSubs, tokens }
}

const live = (account: string) =>
  server.webhooks.all(account).filter((w) => w.state === 'active' && w.url === URL_)

describe('connections across two processes, every interleaving', () => {
  it('property: the webhooks agree with the stored connection, and only its browser is recognised', async () => {
    const op = fc.constantFrom<Op>('connect_p', 'connect_q', 'disconnect', 'ensure', 'reconcile')
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(op, { minLength: 1, maxLength: 3 }),
        fc.array(op, { minLength: 1, maxLength: 3 }),
        async (s, ops1, ops2) => {
          for (const account of ['acct_p', 'acct_q'])
            for (const w of server.webhooks.all(account)) server.webhooks.remove(w.id)
          const tokenStore = new MemoryTokenStore()
          const subscriptionStore = new MemorySubscriptionStore()
          const history: History = { browsers: [], written: [], targeted: new Set() }
          const one = processOf(s, recording(s, tokenStore, history), subscriptionStore, history)
          const two = processOf(
            s,
            recording(s, tokenStore, history),
            ownClient(subscriptionStore),
            history,
          )
          // Connected to P first, in order.
          const first = one.run('connect_p')
          await s.waitFor(first)
          const sequence = async (p: typeof one, ops: Op[]) => {
            for (const o of ops) await p.run(o).catch(() => {})
          }
          await s.waitFor(Promise.all([sequence(one, ops1), sequence(two, ops2)]))
          // The dust settles: one reconcile, all its answers in order.
          await s.waitFor(one.subscriptions.reconcile())
          const stored = await tokenStore.get(KEY)
          const record = await subscriptionStore.get(KEY)
          if (stored === undefined) {
            expect(live('acct_p')).toEqual([])
            expect(live('acct_q')).toEqual([])
          } else {
            const account = String(stored.account?.id)
            const other = account === 'acct_p' ? 'acct_q' : 'acct_p'
            const mine = live(account)
            expect(mine.map((w) => w.id)).toHaveLength(1)
            expect(live(other)).toEqual([])
            expect(record?.active).toBe(true)
            const kept = record!.webhooks.find((w) => w.removedAt === undefined)
            expect(kept?.id).toBe(mine[0]!.id)
            expect(kept?.secret).toBe(mine[0]!.secret)
          }
          // The last connection written is stored, unless a disconnect named it.
          const last = history.written.at(-1)!
          if (!history.targeted.has(last)) expect(stored?.connection).toBe(last)
          else if (stored !== undefined) expect(stored.connection).toBe(last)
          // Only the browser of the stored connection is recognised.
          const recognised = await s.waitFor(
            Promise.all(history.browsers.map(({ cookie }) => one.routes.connectedKey({ cookie }))),
          )
          expect(recognised.filter((k) => k !== undefined).length).toBe(
            stored === undefined ? 0 : 1,
          )
        },
      ),
      { numRuns: 100 },
    )
  }, 120_000)
})

describe('a key switching service account, held halfway', () => {
  it("another instance's ensure waits for the switch: nothing is created in the old account", async () => {
    for (const account of ['acct_p', 'acct_q'])
      for (const w of server.webhooks.all(account)) server.webhooks.remove(w.id)
    const tokenStore = new MemoryTokenStore()
    const subscriptionStore = new MemorySubscriptionStore()
    // The first instance's write of the new account's tokens is held until released.
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let holding = false
    const held = ownClient(tokenStore)
    const compareAndSet = held.compareAndSet!
    held.compareAndSet = async (key, record, version) => {
      if (record.account?.id === 'acct_q') {
        holding = true
        await gate
      }
      return compareAndSet(key, record, version)
    }
    const noSchedule = fc.sample(fc.scheduler(), 1)[0]!
    const history: History = { browsers: [], written: [], targeted: new Set() }
    const one = processOf(noSchedule, held, subscriptionStore, history, false)
    const two = processOf(
      noSchedule,
      ownClient(tokenStore),
      ownClient(subscriptionStore),
      history,
      false,
    )
    await one.run('connect_p')
    expect(live('acct_p')).toHaveLength(1)
    const switching = one.run('connect_q')
    while (!holding) await new Promise((resolve) => setTimeout(resolve, 5))
    const ensuring = two.subscriptions.ensure(KEY)
    await new Promise((resolve) => setTimeout(resolve, 150))
    release()
    await switching
    await ensuring
    expect(live('acct_p')).toEqual([])
    expect(live('acct_q')).toHaveLength(1)
    expect((await tokenStore.get(KEY))?.account?.id).toBe('acct_q')
  })
})
