import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isDeepStrictEqual } from 'node:util'
import {
  type AnyWebhookEvent,
  createDeliveryLedger,
  createDeliveryPage,
  createWebhookHandler,
  createWebhookSubscriptions,
  MemoryLedgerStore,
  MemorySubscriptionStore,
  type WebhookContext,
  type WebhookHandler,
} from '@scheduling-kit/core'
import { createTestEvent } from './events.js'
import { serveWebhooks } from './handler-server.js'
import { type It, type QueueKit, quiet, SECRET, serve, until, withQueue } from './queue-kit.js'
import { startFakeSchedulingService } from './service.js'
import type { FakeSchedulingService } from './service-types.js'
import { sendTestEvent } from './sign.js'

// The queue layout the docs recommend: the app receives (a queue and the ledger, no handler),
// the worker runs the handlers. A replay from the delivery page or the CLI, and a catch-up
// after an outage, run in the worker, each once, through the ledger; the app reports them
// queued, never replayed or ran.

const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname

/** `scheduling-kit deliveries <args>` as its own OS process. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, 'deliveries', ...args])
    let stdout = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.on('close', (code) => resolve({ code, stdout }))
  })
}

/** What the worker's handlers did: each run by payload id, with what the ledger told them. */
class Runs {
  readonly ran: { id: string; account?: string; replay?: string; catchUp?: boolean }[] = []
  /** Each account's Events as the worker applied them, by `account|id`. */
  readonly applied = new Map<string, unknown>()
  failing = new Set<string>()

  run = (event: AnyWebhookEvent, context: WebhookContext) => {
    if (this.failing.has(event.id)) throw new Error('the handler is down')
    this.ran.push({
      id: event.id,
      ...(context.account === undefined ? {} : { account: context.account }),
      ...(context.replay === undefined ? {} : { replay: context.replay.of }),
      ...(context.catchUp === true ? { catchUp: true } : {}),
    })
    const payload = event.payload as { id?: string } | undefined
    if (payload?.id !== undefined) this.applied.set(`${context.account}|${payload.id}`, payload)
  }

  count(id: string): number {
    return this.ran.filter((r) => r.id === id).length
  }
}

/** A dead letter replayed through the delivery page runs in the worker, once. */
function replayInTheWorker(kit: QueueKit, it: It): void {
  const wait = kit.timeoutMs ?? 20_000
  it('the handlers only in the worker: a dead letter replayed with the CLI through the delivery page runs in the worker once, reported queued', async () => {
    await withQueue(kit, { attempts: 2, backoffMs: 20 }, async (q, later) => {
      const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), logger: quiet })
      // The app: a queue and the ledger, no handler. The worker: the handlers.
      const app = createWebhookHandler({ secret: SECRET, queue: q.queue, ledger, logger: quiet })
      const runs = new Runs()
      const handlers = createWebhookHandler({ secret: SECRET, logger: quiet, onAny: runs.run })
      const server = await serve(app)
      later(server.close)
      const worker = await q.worker({ handler: handlers, ledger })
      later(worker.close)
      const event = createTestEvent('event.canceled')
      runs.failing.add(event.id)
      const sent = await sendTestEvent(server.url, event, { secret: SECRET })
      assert.equal(sent.status, 200)
      await until(
        async () => (await ledger.get(event.id))?.status === 'dead',
        wait,
        'a dead letter',
      )
      runs.failing.clear()
      const page = createDeliveryPage(ledger, {
        authorize: (request) => request.headers.authorization === 'Bearer ops',
        replay: app.replay,
      })
      const pageServer = createServer((req, res) => page.node(req, res))
      await new Promise<void>((r) => pageServer.listen(0, '127.0.0.1', r))
      later(
        () =>
          new Promise<void>((r) => {
            pageServer.closeAllConnections()
            pageServer.close(() => r())
          }),
      )
      const url = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/admin/deliveries`
      const replayed = await cli([
        'replay',
        event.id,
        '--page',
        url,
        '--header',
        'authorization: Bearer ops',
      ])
      assert.equal(replayed.code, 0, replayed.stdout)
      assert.ok(
        replayed.stdout.startsWith('Queued ') && replayed.stdout.includes('the worker replays it'),
        replayed.stdout,
      )
      await until(async () => (await ledger.get(event.id))?.status === 'done', wait, 'the replay')
      assert.deepEqual(runs.ran, [{ id: event.id, replay: event.id }], 'ran once, in the worker')
      // The service's own retry of it now: a duplicate, nothing runs again.
      assert.equal((await sendTestEvent(server.url, event, { secret: SECRET })).status, 200)
      // A replay asked of the app for a filter of dead ones: none left, nothing queued.
      const none = await app.replay({ status: 'dead' })
      assert.equal(none.queued + none.replayed, 0)
      const after = createTestEvent('event.created')
      assert.equal((await sendTestEvent(server.url, after, { secret: SECRET })).status, 200)
      await until(() => runs.count(after.id) === 1, wait, 'a later delivery')
      assert.equal(runs.count(event.id), 1, 'the replayed delivery ran once in all')
    })
  })
}

/** Three changes the app misses, its server down past every retry; resolves once all are given up. */
async function missedChanges(
  service: FakeSchedulingService,
  accounts: string[],
  events: string[],
): Promise<void> {
  await service.trigger('event.rescheduled', {
    account: accounts[0],
    payload: { id: events[0], state: 'confirmed', start_at: '2031-02-03T10:00:00.000Z' },
  })
  await service.trigger('event.attendee.added', {
    account: accounts[1],
    payload: { id: events[1], state: 'confirmed', attendees: [{ id: 'attendee_new' }] },
  })
  await service.trigger('event.canceled', {
    account: accounts[1],
    payload: { id: events[2], state: 'canceled' },
  })
  await service.idle()
}

/** catchUp after an outage queues each difference; the worker applies each once. */
function catchUpInTheWorker(kit: QueueKit, it: It): void {
  const wait = kit.timeoutMs ?? 20_000
  it('the handlers only in the worker: catchUp after an outage queues each difference; the worker applies every Event as the API lists it, each once', async () => {
    const service = await startFakeSchedulingService({
      retrySchedule: [20, 40],
      deliveryTimeoutMs: 2_000,
    })
    try {
      await withQueue(kit, { attempts: 3, backoffMs: 20 }, async (q, later) => {
        const accounts = ['acct_q_a', 'acct_q_b']
        const tokens = Object.fromEntries(
          accounts.map((a) => [a, service.auth.grant(a).access_token]),
        )
        const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), logger: quiet })
        let app: WebhookHandler | undefined
        let server = await serveWebhooks(() => app!)
        const port = server.port
        const subscriptions = createWebhookSubscriptions({
          url: server.url,
          tokens: { getAccessToken: async (key: string) => tokens[key]! },
          apiUrl: service.apiUrl,
          store: new MemorySubscriptionStore(),
          retry: { baseDelayMs: 5, maxDelayMs: 20 },
          logger: quiet,
        })
        app = createWebhookHandler({ subscriptions, queue: q.queue, ledger, logger: quiet })
        for (const account of accounts) await subscriptions.ensure(account)
        const runs = new Runs()
        const handlers = createWebhookHandler({ secret: SECRET, logger: quiet, onAny: runs.run })
        const worker = await q.worker({ handler: handlers, ledger })
        later(worker.close)
        later(() => server.close())
        const events = [0, 1, 2].map((i) => `event_q_${i}`)
        for (const account of accounts)
          for (const id of events)
            await service.trigger('event.created', { account, payload: { id, state: 'confirmed' } })
        await until(() => runs.applied.size === 6, wait, 'the live creations')
        // The app is down past every retry: a reschedule, an attendee change, a cancellation.
        await server.close()
        await missedChanges(service, accounts, events)
        server = await serveWebhooks(() => app!, port)
        const report = await app.catchUp()
        assert.equal(report.problems.length, 0, JSON.stringify(report.problems))
        assert.equal(report.fed, 3)
        assert.equal(report.queued, 3, 'handed to the worker')
        assert.equal(report.ran, 0, 'nothing ran in the app')
        const equal = () =>
          accounts.every((account) =>
            service
              .events(account)
              // In any key order: a queue may keep jobs as JSONB, which orders keys its own way.
              .every((listed) =>
                isDeepStrictEqual(runs.applied.get(`${account}|${listed.id}`), listed),
              ),
          )
        await until(equal, wait, 'every Event applied as the API lists it').catch(async (error) => {
          const entries = (await ledger.list({ limit: 50 })).entries
          const told = entries.map((e) => `${e.type} ${e.source} ${e.status} ${e.lastError ?? ''}`)
          throw new Error(`${(error as Error).message}; the ledger has ${told.join(' | ')}`)
        })
        const caughtUp = runs.ran.filter((r) => r.catchUp)
        assert.equal(caughtUp.length, 3, 'three catch-up deliveries, each run once')
        assert.equal(new Set(caughtUp.map((r) => `${r.account}|${r.id}`)).size, 3)
        const again = await app.catchUp()
        assert.equal(again.fed, 0, 'nothing left to feed')
      })
    } finally {
      await service.close()
    }
  })
}

export function queueWhereHandlersAre(kit: QueueKit, it: It): void {
  replayInTheWorker(kit, it)
  catchUpInTheWorker(kit, it)
}
