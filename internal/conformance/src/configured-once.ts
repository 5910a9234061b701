// An app and its queue's worker, each configured by one `createScheduling` object: the stores,
// the ledger and the queue named once, the handlers only in the worker (the layout the queue
// packages' READMEs give). Both queue packages run it on their own store bundle and queue.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  ConfigError,
  createScheduling,
  type Scheduling,
  type StoreBundle,
  type WebhookContext,
  type WebhookQueue,
} from '@scheduling-kit/core'
import { expect, it, vi } from 'vitest'
import { SECRET } from './context.js'
import { deliver, envelope } from './http.js'

export interface ConfiguredOnceKit {
  /** The app's stores (a prefix or schema of the test's own): every call the same place. */
  stores(): StoreBundle
  /** A fresh queue of the package (its own name), retrying a failed job soon, 3 attempts. */
  queue(): Promise<WebhookQueue & { ready(): Promise<void>; close(): Promise<void> }>
  /** The package's worker factory (`createBullMQWorker`, `createPostgresWorker`). */
  worker(options: { scheduling?: Scheduling; concurrency?: number; [option: string]: unknown }): {
    ready(): Promise<void>
    close(): Promise<void>
  }
  /** An option the queue holds, with a value, to pass beside `scheduling`: `{ pool }`, `{ connection }`. */
  queueOption: Record<string, unknown>
  /** Whose queue this is, as the refusal names it: `createBullMQQueue`, `createPostgresQueue`. */
  queueMaker: string
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} }
const patience = { timeout: 30_000, interval: 25 }

/** What the app gives `createScheduling`, the web process and the worker alike. */
const settings = {
  clientId: 'client_once',
  clientSecret: 'client-secret-once',
  redirectUri: 'https://app.example.com/auth/scheduling/callback',
  authUrl: 'https://auth.example.com',
  apiUrl: 'https://api.example.com/v1',
  secret: SECRET,
  logger: quiet,
}

export function runConfiguredOnce(kit: ConfiguredOnceKit): void {
  it('configured once: the app only verifies and queues, the worker runs every delivery and a replay of a dead letter once; one health for all', async () => {
    const queue = await kit.queue()
    const closers: Array<() => Promise<unknown>> = [() => queue.close()]
    try {
      // The web process: no handler at all.
      const app = createScheduling({
        ...settings,
        stores: kit.stores(),
        ledger: { maxAttempts: 3 },
        queue,
      })
      // The worker process: the same settings, its own object; the handlers are here only.
      const work = createScheduling({
        ...settings,
        stores: kit.stores(),
        ledger: { maxAttempts: 3 },
        queue,
      })
      const runs = new Map<string, WebhookContext[]>()
      let fixed = false
      work.webhooks.onAny((event, context) => {
        runs.set(event.id, [...(runs.get(event.id) ?? []), context])
        if (event.type === 'event.canceled' && !fixed)
          throw new Error('the booking table is locked')
      })
      const worker = kit.worker({ scheduling: work, concurrency: 2 })
      closers.unshift(() => worker.close())
      await Promise.all([queue.ready(), worker.ready()])
      const server = await serveScheduling(app)
      closers.unshift(server.close)

      const created = envelope('event.created')
      const canceled = envelope('event.canceled')
      const [createdId, canceledId] = [created, canceled].map((body) => JSON.parse(body).id)
      // The created one twice (the service's retry): one job, one run.
      for (const body of [created, created, canceled])
        expect((await deliver(server.url, body)).status).toBe(200)

      const ledger = app.ledger!
      await vi.waitFor(
        async () => expect((await ledger.get(createdId))?.status).toBe('done'),
        patience,
      )
      await vi.waitFor(
        async () => expect((await ledger.get(canceledId))?.status).toBe('dead'),
        patience,
      )
      expect(runs.get(createdId)).toHaveLength(1)
      expect(runs.get(canceledId)).toHaveLength(3)

      // The dead letter replayed from the app, which has no handler: the worker runs it.
      fixed = true
      expect(await app.webhooks.replay(canceledId)).toMatchObject({ replayed: 0, queued: 1 })
      await vi.waitFor(
        async () => expect((await ledger.get(canceledId))?.status).toBe('done'),
        patience,
      )
      const replayed = runs.get(canceledId)!
      expect(replayed).toHaveLength(4)
      expect(replayed[3]?.replay).toBeDefined()
      expect(await ledger.get(canceledId)).toMatchObject({ source: 'replay', attempts: 4 })

      // One readiness answer: tokens, subscriptions-free, the ledger's store and the queue; no
      // dedupe store (the ledger records deliveries).
      const health = await app.health({ timeoutMs: 5_000 })
      expect(health.ok).toBe(true)
      const names = health.checks.map((check) => check.name.split('.')[0])
      expect(new Set(names)).toEqual(new Set(['tokens', 'ledger', 'queue']))
    } finally {
      for (const close of closers) await close()
    }
  })

  it('configured once: a worker refuses a scheduling without its queue, or told again what scheduling holds', async () => {
    const queue = await kit.queue()
    try {
      const without = createScheduling({ ...settings, stores: kit.stores() })
      const withQueue = createScheduling({ ...settings, stores: kit.stores(), queue })
      const other = createScheduling({
        ...settings,
        stores: kit.stores(),
        queue: { enqueue() {}, messaging: { system: 'other', destination: 'q' } },
      })
      const cases: [() => unknown, RegExp][] = [
        [() => kit.worker({ scheduling: without }), /scheduling has no queue/],
        [
          () => kit.worker({ scheduling: withQueue, ...kit.queueOption }),
          /comes from scheduling: give it once/,
        ],
        [
          () => kit.worker({ scheduling: withQueue, ledger: withQueue.ledger ?? {} }),
          /ledger comes from scheduling/,
        ],
        [() => kit.worker({ scheduling: other }), new RegExp(`not one ${kit.queueMaker} made`)],
        [() => kit.worker({ scheduling: { webhooks: {} } as never }), /createScheduling's object/],
        [() => kit.worker({}), /pass \{ scheduling \}/],
      ]
      for (const [make, message] of cases) {
        expect(make).toThrow(ConfigError)
        expect(make).toThrow(message)
      }
    } finally {
      await queue.close()
    }
  })
}

/** Serves an app's webhook handler (`scheduling.webhooks`) on loopback, its body untouched. */
export async function serveScheduling(scheduling: Pick<Scheduling, 'webhooks'>) {
  const server = createServer(async (req, res) => {
    const answer = await scheduling.webhooks.handle({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: req,
    })
    res.writeHead(answer?.status ?? 404, answer?.headers).end(answer?.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhooks/scheduling`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
