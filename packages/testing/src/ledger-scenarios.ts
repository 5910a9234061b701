import assert from 'node:assert/strict'
import {
  type AnyWebhookEvent,
  ConfigError,
  createDeliveryLedger,
  createWebhookHandler,
  createWebhookSubscriptions,
  type LedgerStore,
  MemorySubscriptionStore,
  type WebhookHandler,
} from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import { serveWebhooks } from './handler-server.js'
import { startFakeSchedulingService } from './service.js'
import type { FakeSchedulingService } from './service-types.js'
import { sendTestEvent } from './sign.js'
import type { StoreConformanceOptions } from './store-conformance.js'

// The ledger's promises end to end, over real HTTP against the fake service, for any ledger
// store: an outage longer than the service's whole retry schedule recovered by `catchUp` with
// every Event's final state applied once; deliveries of one Event shuffled and retried ending
// on the newest state; a repeated catch-up finding nothing.

const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** The app under test: one handler with a ledger and subscriptions, served on a port of its own. */
interface App {
  handler: WebhookHandler
  /** Each Event's state as the app applied it, and how often each payload was applied. */
  states: Map<string, string | undefined>
  applied: Map<string, number>
  url: string
  start(): Promise<void>
  stop(): Promise<void>
}

async function startApp(service: FakeSchedulingService, store: LedgerStore, accounts: string[]) {
  const tokens = Object.fromEntries(accounts.map((a) => [a, service.auth.grant(a).access_token]))
  let server: Awaited<ReturnType<typeof serveWebhooks>> | undefined
  let port = 0
  const states = new Map<string, string | undefined>()
  const applied = new Map<string, number>()
  const placeholder = 'http://127.0.0.1:1/webhooks/scheduling'
  const app: App = {
    handler: undefined as unknown as WebhookHandler,
    states,
    applied,
    url: placeholder,
    async start() {
      // The same port each time: the service's webhooks point at it.
      server = await serveWebhooks(() => app.handler, port)
      port = server.port
      app.url = server.url
    },
    stop: async () => {
      await server?.close()
    },
  }
  await app.start()
  const subscriptions = createWebhookSubscriptions({
    url: app.url,
    tokens: { getAccessToken: async (key: string) => tokens[key]! },
    apiUrl: service.apiUrl,
    store: new MemorySubscriptionStore(),
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    logger: quiet,
  })
  app.handler = createWebhookHandler({
    subscriptions,
    ledger: createDeliveryLedger({ store, logger: quiet }),
    logger: quiet,
    onAny: (event: AnyWebhookEvent) => {
      const payload = event.payload as { id?: string; state?: string } | undefined
      if (payload?.id === undefined) return
      states.set(payload.id, payload.state)
      applied.set(event.id, (applied.get(event.id) ?? 0) + 1)
    },
  })
  for (const account of accounts) await subscriptions.ensure(account)
  return app
}

/**
 * Runs the ledger's end-to-end scenarios with `createStore`'s ledger store (a fresh, empty one
 * each time, or one under a fresh prefix or schema).
 *
 * @example
 * ```ts
 * runLedgerScenarios(() => new RedisLedgerStore({ client, prefix: uniquePrefix() }), { describe, it })
 * ```
 */
export function runLedgerScenarios(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function')
    throw new ConfigError('runLedgerScenarios: pass { describe, it } from your test runner.')
  describe(options.name ?? 'ledger scenarios', () => {
    it("an outage longer than the whole retry schedule: catchUp applies every Event's final state once; a second catchUp finds nothing", async () => {
      const service = await startFakeSchedulingService({
        retrySchedule: [20, 40],
        deliveryTimeoutMs: 2_000,
      })
      const accounts = ['acct_outage_a', 'acct_outage_b', 'acct_outage_c']
      const app = await startApp(service, await createStore(), accounts)
      try {
        await app.stop()
        // 30 changes to 12 Events while the app is down: created, then changed or canceled.
        for (let i = 0; i < 12; i++) {
          const account = accounts[i % 3]!
          const payload = { id: `event_outage_${i}` }
          await service.trigger('event.created', { account, payload })
          if (i % 2 === 0) await service.trigger('event.rescheduled', { account, payload })
          if (i % 3 !== 2) await service.trigger('event.canceled', { account, payload })
        }
        await service.idle() // every retry spent
        assert.equal(service.deliveries().filter((d) => d.ok).length, 0)
        await app.start()
        service.failEvents({ status: 429, retryAfter: '0', count: 2 })
        const report = await app.handler.catchUp()
        assert.equal(report.accounts, 3)
        assert.equal(report.problems.length, 0, JSON.stringify(report.problems))
        assert.equal(report.fed, 12)
        assert.equal(report.ran, 12)
        assert.deepEqual(report.unrecoverable, ['poll.*', 'workflow.*'])
        for (const account of accounts)
          for (const event of service.events(account))
            assert.equal(
              app.states.get(event.id),
              event.state,
              `${event.id} ends as the API lists it`,
            )
        assert.ok(
          [...app.applied.values()].every((n) => n === 1),
          'none applied twice',
        )
        const again = await app.handler.catchUp()
        assert.equal(again.fed, 0)
        assert.equal(again.listed, 12)
      } finally {
        await app.stop()
        await service.close()
      }
    })

    it("an Event's deliveries shuffled, each sent twice: the state applied last is the newest", async () => {
      const service = await startFakeSchedulingService()
      const account = 'acct_storm'
      const app = await startApp(service, await createStore(), [account])
      try {
        const webhook = service.webhooks(account)[0]!
        const types = ['event.created', 'event.rescheduled', 'event.changed', 'event.canceled']
        for (let round = 0; round < 5; round++) {
          const payload = { id: `event_storm_${round}` }
          const events = types.map((type, i) =>
            createTestEvent(type, {
              occurred_at: new Date(Date.UTC(2024, 4, 1, 10, 0, i)).toISOString(),
              payload: { ...payload, state: type === 'event.canceled' ? 'canceled' : 'confirmed' },
            }),
          )
          const order = [...events, ...events].sort(() => Math.random() - 0.5)
          for (const event of order) {
            const { status } = await sendTestEvent(app.url, event, {
              secret: webhook.secret,
              webhookId: webhook.id,
            })
            assert.equal(status, 200)
          }
          assert.equal(app.states.get(payload.id), 'canceled', `round ${round}`)
        }
        assert.ok(
          [...app.applied.values()].every((n) => n === 1),
          'none applied twice',
        )
      } finally {
        await app.stop()
        await service.close()
      }
    })
  })
}
