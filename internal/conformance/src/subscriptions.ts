import { randomBytes } from 'node:crypto'
import {
  createOAuthClient,
  createTokenManager,
  createWebhookSubscriptions,
  MemorySubscriptionStore,
  type WebhookSubscriptions,
} from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import type { Started, StartOptions, SuiteContext } from './context.js'
import type { AdapterHarness } from './harness.js'
import { cookieHeader, deliver, envelope, request } from './http.js'

/**
 * An app whose webhooks and OAuth routes share a `createWebhookSubscriptions`, made once the
 * app's address is known; handlers record the account each delivery belongs to.
 */
async function startWithSubscriptions(ctx: SuiteContext, more: StartOptions = {}) {
  const auth = ctx.auth()
  let subscriptions: WebhookSubscriptions | undefined
  const late = {
    ensure: (key: string) => subscriptions!.ensure(key),
    remove: (key: string) => subscriptions!.remove(key),
    lookup: (id: string) => subscriptions!.lookup(id),
  }
  const accounts: Array<string | undefined> = []
  const logged: string[] = []
  const app: Started = await ctx.start({
    ...more,
    webhooks: {
      secret: undefined,
      subscriptions: late,
      onAny: (_event, context) => void accounts.push(context.account),
    },
    oauth: {
      subscriptions: late,
      logger: {
        debug() {},
        info() {},
        warn: (m) => void logged.push(m),
        error: (m) => void logged.push(m),
      },
    },
  })
  const tokens = createTokenManager({
    oauth: createOAuthClient({
      clientId: auth.clientId,
      clientSecret: auth.clientSecret,
      redirectUri: `${app.base}/auth/scheduling/callback`,
      authUrl: auth.url,
    }),
    store: app.store,
  })
  const store = new MemorySubscriptionStore()
  subscriptions = createWebhookSubscriptions({
    url: app.hook,
    tokens,
    apiUrl: `${auth.url}/v1`,
    store,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
  /** The account's webhooks at the service that point at this app. */
  const remote = (account: string) => auth.webhooks.all(account).filter((w) => w.url === app.hook)
  return { app, accounts, logged, subscriptions, store, remote, auth }
}

/** Connects `account` through the app's routes, as a browser does. */
async function connectAs(app: Started, ctx: SuiteContext, account: string) {
  ctx.auth().setAuthorize('approve', account)
  const login = await request(`${app.base}/auth/scheduling/login`)
  const cookie = cookieHeader(login.headers)
  const consent = await request(login.headers.get('location')!)
  const back = await request(consent.headers.get('location')!, { headers: { cookie } })
  return { back, connection: cookieHeader(back.headers) }
}

/** Connected accounts and their webhooks, through the adapter: connect, deliver, disconnect. */
export function defineSubscriptionCases(harness: AdapterHarness, ctx: SuiteContext): void {
  describe(`${harness.name}: connected accounts and their webhooks`, () => {
    it("connect makes the account's webhook; its deliveries verify with its secret and name the account", async () => {
      const setup = await startWithSubscriptions(ctx)
      const account = `acct_${randomBytes(4).toString('hex')}`
      const other = `acct_${randomBytes(4).toString('hex')}`
      const { back } = await connectAs(setup.app, ctx, account)
      expect(back.status).toBe(302)
      await connectAs(setup.app, ctx, other)
      const [mine] = setup.remote(account)
      const [theirs] = setup.remote(other)
      expect(setup.remote(account)).toHaveLength(1)
      const body = envelope('event.created')
      const res = await deliver(setup.app.hook, body, { secret: mine!.secret, webhookId: mine!.id })
      expect(res.status).toBe(200)
      expect(setup.accounts).toEqual([account])
      // Signed with one account's secret, naming another's webhook: refused.
      const crossed = await deliver(setup.app.hook, envelope('event.created'), {
        secret: mine!.secret,
        webhookId: theirs!.id,
      })
      expect(crossed.status).toBe(401)
      const unknown = await deliver(setup.app.hook, envelope('event.created'), {
        secret: mine!.secret,
        webhookId: 'wh_never_created',
      })
      expect(unknown.status).toBe(401)
      expect(unknown.json.error?.code).toBe('secret_unknown')
      expect(setup.accounts).toEqual([account])
    })

    it('disconnect deletes the webhook while the token works, then the tokens; late deliveries run no handler', async () => {
      const setup = await startWithSubscriptions(ctx)
      const account = `acct_${randomBytes(4).toString('hex')}`
      const { connection } = await connectAs(setup.app, ctx, account)
      const [hook] = setup.remote(account)
      const bye = await request(`${setup.app.base}/auth/scheduling/disconnect`, {
        method: 'POST',
        headers: { cookie: connection, origin: setup.app.base, accept: 'application/json' },
      })
      expect(bye.status).toBe(200)
      expect(setup.remote(account)).toEqual([])
      expect(await setup.app.store.get(account)).toBeUndefined()
      const late = await deliver(setup.app.hook, envelope('event.created'), {
        secret: hook!.secret,
        webhookId: hook!.id,
      })
      expect(late.status).toBe(200)
      expect(late.json).toEqual({ received: true, removed: true })
      expect(setup.accounts).toEqual([])
    })

    it('a webhook the service will not make: connected all the same, the page and the log say so, reconcile makes it', async () => {
      const setup = await startWithSubscriptions(ctx)
      const account = `acct_${randomBytes(4).toString('hex')}`
      setup.auth.webhooks.failApi({ status: 422, method: 'POST' })
      const { back, connection } = await connectAs(setup.app, ctx, account)
      expect(back.status).toBe(200)
      expect(back.text).toMatch(/connected, but its webhook could not be set up yet/)
      expect(connection).toMatch(/scheduling_connection=/)
      expect(await setup.app.store.get(account)).toBeDefined()
      expect(setup.remote(account)).toEqual([])
      expect(setup.logged.join('\n')).toMatch(
        new RegExp(`"${account}" is connected, but its webhook could not be set up`),
      )
      const report = await setup.subscriptions.reconcile()
      expect(report.created).toBe(1)
      expect(setup.remote(account)).toHaveLength(1)
    })
  })
}
