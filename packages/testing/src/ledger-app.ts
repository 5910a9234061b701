import {
  type AnyWebhookEvent,
  createDeliveryLedger,
  createWebhookHandler,
  createWebhookSubscriptions,
  type DeliveryLedger,
  type LedgerStore,
  MemorySubscriptionStore,
  type WebhookHandler,
} from '@scheduling-kit/core'
import { serveWebhooks } from './handler-server.js'
import type { FakeSchedulingService } from './service-types.js'

// The app the ledger scenarios run against: one webhook handler with a ledger and each
// account's webhook, served on a port of its own (the same port again after a stop), keeping
// what its handlers applied.

export const quiet = { debug() {}, info() {}, warn() {}, error() {} }

/** The app under test: one handler with a ledger and subscriptions, served on a port of its own. */
export interface App {
  handler: WebhookHandler
  ledger: DeliveryLedger
  /** Each Event's state as the app applied it, and how often each payload was applied. */
  states: Map<string, string | undefined>
  applied: Map<string, number>
  /** Each account's Events as the app applied them, whole, by `account|id`. */
  resources: Map<string, unknown>
  /** Handlers that throw for these payload ids (a handler that is down). */
  failing: Set<string>
  url: string
  start(): Promise<void>
  stop(): Promise<void>
}

export async function startApp(
  service: FakeSchedulingService,
  store: LedgerStore,
  accounts: string[],
  now?: () => number,
): Promise<App> {
  const tokens = Object.fromEntries(accounts.map((a) => [a, service.auth.grant(a).access_token]))
  let server: Awaited<ReturnType<typeof serveWebhooks>> | undefined
  let port = 0
  const states = new Map<string, string | undefined>()
  const applied = new Map<string, number>()
  const resources = new Map<string, unknown>()
  const failing = new Set<string>()
  const placeholder = 'http://127.0.0.1:1/webhooks/scheduling'
  const app: App = {
    handler: undefined as unknown as WebhookHandler,
    ledger: undefined as unknown as DeliveryLedger,
    states,
    applied,
    resources,
    failing,
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
  app.ledger = createDeliveryLedger({ store, logger: quiet, ...(now === undefined ? {} : { now }) })
  app.handler = createWebhookHandler({
    subscriptions,
    ledger: app.ledger,
    logger: quiet,
    onAny: (event: AnyWebhookEvent, context) => {
      if (failing.has(event.id)) throw new Error('the handler is down')
      const payload = event.payload as { id?: string; state?: string } | undefined
      if (payload?.id === undefined) return
      states.set(payload.id, payload.state)
      resources.set(`${context.account}|${payload.id}`, payload)
      applied.set(event.id, (applied.get(event.id) ?? 0) + 1)
    },
  })
  for (const account of accounts) await subscriptions.ensure(account)
  return app
}
