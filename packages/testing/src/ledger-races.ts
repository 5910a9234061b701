import assert from 'node:assert/strict'
import type { LedgerStore } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import { createTestEvent } from './events.js'
import { startApp } from './ledger-app.js'
import { startFakeSchedulingService } from './service.js'
import { sendTestEvent } from './sign.js'

// The ledger's joints under races, for any ledger store: a catch-up while the service delivers
// live changes to the same Events ends on what the API lists, each change applied once; a
// replay of a failed delivery racing the service's own retry runs it once.

/** Trials of each race (`LEDGER_RACE_TRIALS` raises them for a longer run). */
const trials = (floor: number) => Math.max(floor, Number(process.env.LEDGER_RACE_TRIALS ?? 0))

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const CHANGES = [
  { type: 'event.rescheduled', payload: { start_at: '2031-05-06T09:00:00.000Z' } },
  { type: 'event.attendee.added', payload: { attendees: [{ id: 'attendee_late' }] } },
  { type: 'event.changed', payload: { description: 'Moved to the big room' } },
  { type: 'event.canceled', payload: { state: 'canceled' } },
] as const

/** catchUp racing live changes to the same Events. */
function catchUpRacingLiveChanges(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  it('catchUp racing live changes to the same Events (10 trials): every Event ends as the API lists it, no change applied twice', async () => {
    // Live deliveries that meet a busy Event are answered 409: the schedule retries them soon.
    const service = await startFakeSchedulingService({
      retrySchedule: [10, 20, 40, 80, 160, 320, 640],
      deliveryTimeoutMs: 5_000,
    })
    const account = 'acct_race'
    const app = await startApp(service, await createStore(), [account])
    try {
      for (let trial = 0; trial < trials(10); trial++) {
        const ids = [0, 1, 2, 3].map((i) => `event_race_${trial}_${i}`)
        for (const id of ids) await service.trigger('event.created', { account, payload: { id } })
        await service.idle()
        // Changes whose deliveries were lost: only catch-up can find them.
        for (const [i, id] of ids.entries()) {
          const change = CHANGES[i % 2]!
          await service.trigger(change.type, {
            account,
            payload: { id, ...change.payload },
            lost: true,
          })
        }
        // Live changes to the same Events while the catch-up lists and feeds.
        const live = ids.map(async (id, i) => {
          await pause((trial * 7 + i * 3) % 12)
          const change = CHANGES[2 + ((trial + i) % 2)]!
          await service.trigger(change.type, { account, payload: { id, ...change.payload } })
        })
        const [report] = await Promise.all([app.handler.catchUp(), ...live])
        assert.equal(report.problems.length, 0, JSON.stringify(report.problems))
        await service.idle()
        for (const listed of service.events(account).filter((e) => ids.includes(e.id)))
          assert.deepEqual(
            app.resources.get(`${account}|${listed.id}`),
            listed,
            `trial ${trial}: ${listed.id} ends as the API lists it`,
          )
        // Anything left over is found by the next catch-up: nothing.
        assert.equal((await app.handler.catchUp()).fed, 0, `trial ${trial}: nothing left`)
      }
      assert.ok(
        [...app.applied.values()].every((n) => n === 1),
        'no change applied twice',
      )
    } finally {
      await app.stop()
      await service.close()
    }
  })
}

/** A replay of a failed delivery racing the service's retry. */
function replayRacingRetry(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  it('a replay of a failed delivery racing the service’s retry (100 trials): it runs once', async () => {
    const service = await startFakeSchedulingService()
    const account = 'acct_replay_race'
    const app = await startApp(service, await createStore(), [account])
    try {
      const webhook = service.webhooks(account)[0]!
      const signing = { secret: webhook.secret, webhookId: webhook.id }
      for (let trial = 0; trial < trials(100); trial++) {
        const event = createTestEvent('event.canceled', {
          payload: { id: `event_replay_race_${trial}` },
        })
        app.failing.add(event.id)
        assert.equal((await sendTestEvent(app.url, event, signing)).status, 500)
        app.failing.delete(event.id)
        const [entry] = (await app.ledger.list({ account, status: 'failed', limit: 1 })).entries
        assert.equal(entry?.payloadId, event.id)
        // The service's retry and a replay from the page at once, the replay a little later
        // in some trials, sooner in others.
        const retry = sendTestEvent(app.url, event, signing)
        const replay = pause(trial % 3).then(() => app.handler.replay(entry.id))
        const [answer, report] = await Promise.all([retry, replay])
        assert.ok([200, 409].includes(answer.status), `trial ${trial}: answered ${answer.status}`)
        assert.equal(report.replayed + report.skipped, 1, `trial ${trial}: one outcome`)
        assert.equal(app.applied.get(event.id), 1, `trial ${trial}: ran once`)
        assert.equal((await app.ledger.get(entry.id))?.status, 'done')
      }
    } finally {
      await app.stop()
      await service.close()
    }
  })
}

export function ledgerRaces(
  createStore: () => LedgerStore | Promise<LedgerStore>,
  it: StoreConformanceOptions['it'],
): void {
  catchUpRacingLiveChanges(createStore, it)
  replayRacingRetry(createStore, it)
}
