import assert from 'node:assert/strict'
import { ConfigError, type LedgerStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { createTestEvent } from './events.js'
import { startApp } from './ledger-app.js'
import { ledgerRaces } from './ledger-races.js'
import { startFakeSchedulingService } from './service.js'
import type { FakeSchedulingService } from './service-types.js'
import { sendTestEvent } from './sign.js'

/**
 * Today (UTC) at `hour`:00:`second`: a delivery's time within the handler's horizon (maxAgeMs),
 * the same in every process of a test.
 */
const todayAt = (hour: number, second: number) => {
  const now = new Date()
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), hour, 0, second)
}

// The ledger's promises end to end, over real HTTP against the fake service, for any ledger
// store: an outage longer than the service's whole retry schedule recovered by `catchUp` with
// every Event's final state applied once; deliveries of one Event shuffled and retried ending
// on the newest state; a repeated catch-up finding nothing.

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
    ledgerOutage(createStore, it)
    ledgerSharedEvent(createStore, it)
    ledgerOldBody(createStore, it)
    ledgerRaces(createStore, it)
    ledgerStorm(createStore, it)
  })
}

/** An outage past the whole retry schedule: catchUp applies every Event's whole resource once. */
function ledgerOutage(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  it("an outage longer than the whole retry schedule, with reschedules, attendee changes and cancellations of Events applied before it: catchUp applies every Event's whole resource once; a second catchUp finds nothing", async () => {
    const service = await startFakeSchedulingService({
      retrySchedule: [20, 40],
      deliveryTimeoutMs: 2_000,
    })
    const accounts = ['acct_outage_a', 'acct_outage_b', 'acct_outage_c']
    const app = await startApp(service, await createStore(), accounts)
    try {
      const payload = (i: number, more: Record<string, unknown> = {}) => ({
        id: `event_outage_${i}`,
        ...more,
      })
      // Six Events booked and applied before the outage.
      for (let i = 0; i < 6; i++)
        await service.trigger('event.created', { account: accounts[i % 3], payload: payload(i) })
      await service.idle()
      assert.equal(app.resources.size, 6)
      await app.stop()
      await missWhileDown(service, accounts, payload)
      await service.idle() // every retry spent
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
          assert.deepEqual(
            app.resources.get(`${account}|${event.id}`),
            event,
            `${event.id} ends as the API lists it, whole`,
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
}

/**
 * While the app is down: each of the six Events rescheduled, given an attendee, or canceled (the
 * state stays confirmed for the first two); six more booked, some changed or canceled.
 */
async function missWhileDown(
  service: FakeSchedulingService,
  accounts: readonly string[],
  payload: (i: number, more?: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const account = accounts[i % 3]
    if (i % 3 === 0)
      await service.trigger('event.rescheduled', {
        account,
        payload: payload(i, { start_at: '2031-03-04T10:00:00.000Z' }),
      })
    else if (i % 3 === 1)
      await service.trigger('event.attendee.added', {
        account,
        payload: payload(i, {
          attendees: [{ id: 'attendee_added', response_status: 'accepted' }],
        }),
      })
    else await service.trigger('event.canceled', { account, payload: payload(i) })
  }
  for (let i = 6; i < 12; i++) {
    const account = accounts[i % 3]
    await service.trigger('event.created', { account, payload: payload(i) })
    if (i % 2 === 0) await service.trigger('event.rescheduled', { account, payload: payload(i) })
    if (i % 3 !== 2) await service.trigger('event.canceled', { account, payload: payload(i) })
  }
}

/** One Event two accounts see, one of them missed its cancellation: catchUp feeds it alone. */
function ledgerSharedEvent(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  it('two accounts see one Event; one missed its cancellation: catchUp feeds that account alone, under its own mark', async () => {
    const service = await startFakeSchedulingService({
      retrySchedule: [20, 40],
      deliveryTimeoutMs: 2_000,
    })
    const accounts = ['acct_shared_a', 'acct_shared_b']
    const app = await startApp(service, await createStore(), accounts)
    try {
      const payload = { id: 'event_shared' }
      for (const account of accounts) await service.trigger('event.created', { account, payload })
      await service.trigger('event.canceled', { account: accounts[0], payload })
      await service.idle()
      await app.stop()
      await service.trigger('event.canceled', { account: accounts[1], payload })
      await service.idle()
      await app.start()
      const report = await app.handler.catchUp()
      assert.equal(report.fed, 1, 'the account that missed it')
      assert.equal(report.ran, 1)
      for (const account of accounts)
        assert.deepEqual(
          app.resources.get(`${account}|event_shared`),
          service.events(account)[0],
          `${account} ends as the API lists it`,
        )
    } finally {
      await app.stop()
      await service.close()
    }
  })
}

/** An Event's deliveries shuffled and sent twice: the newest state is the one applied last. */
function ledgerStorm(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
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
            occurred_at: new Date(todayAt(10, i)).toISOString(),
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
}

/** An old body sent again: not run; its account's Events read again, what differs applied. */
function ledgerOldBody(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  it("a body captured 60 days ago, sent again to a fresh process after a missed cancellation: its body not run, its account's Events read again, the cancellation applied", async () => {
    const service = await startFakeSchedulingService({
      retrySchedule: [20, 40],
      deliveryTimeoutMs: 2_000,
    })
    const account = 'acct_old_body'
    const app = await startApp(service, await createStore(), [account])
    try {
      const payload = { id: 'event_old_body' }
      await service.trigger('event.created', { account, payload })
      await service.idle()
      assert.equal(app.states.get(payload.id), 'confirmed')
      await app.stop()
      await service.trigger('event.canceled', { account, payload })
      await service.idle()
      await app.start()
      const webhook = service.webhooks(account)[0]!
      const captured = createTestEvent('event.created', {
        occurred_at: new Date(Date.now() - 60 * 86_400_000).toISOString(),
        payload: { ...payload, state: 'confirmed' },
      })
      const applied = app.applied.size
      const { status, body } = await sendTestEvent(app.url, captured, {
        secret: webhook.secret,
        webhookId: webhook.id,
      })
      assert.equal(status, 200)
      const answer = JSON.parse(body) as { error: { code: string; message: string } }
      assert.equal(answer.error.code, 'too_old')
      assert.match(answer.error.message, /read again, 1 difference\(s\) run/)
      assert.equal(app.applied.get(captured.id), undefined, 'the old body never ran')
      assert.equal(app.states.get(payload.id), 'canceled', 'the state the API lists now')
      assert.equal(app.applied.size, applied + 1, 'one difference ran')
      assert.deepEqual(app.resources.get(`${account}|${payload.id}`), service.events(account)[0])
    } finally {
      await app.stop()
      await service.close()
    }
  })
}
