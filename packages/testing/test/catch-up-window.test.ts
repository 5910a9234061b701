import { MemoryLedgerStore } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { startApp } from '../src/ledger-app.js'
import { startFakeSchedulingService } from '../src/service.js'

// Catch-up lists what an outage can have changed, not an account's whole history: over real
// HTTP against the fake service, an account with 5,000 Events long past costs at most two list
// requests when nothing is new, and what did change (an upcoming Event rescheduled, a recent
// one canceled) is still found.

const DAY = 86_400_000
const HISTORY = 5_000

describe('catch-up by time', () => {
  it('5,000 past Events: a run with nothing new lists twice (upcoming, then past down to since); a reschedule and a cancellation missed are found in the same two', async () => {
    const service = await startFakeSchedulingService()
    const account = 'acct_history'
    const app = await startApp(service, new MemoryLedgerStore(), [account])
    try {
      const now = Date.now()
      const at = (ms: number) => new Date(ms).toISOString()
      const event = (id: string, start: number) => ({
        id,
        start_at: at(start),
        end_at: at(start + 1_800_000),
      })
      // Two years of history, all of it ended before the ledger's retention (30 days).
      for (let i = 0; i < HISTORY; i++)
        await service.trigger('event.created', {
          account,
          lost: true,
          payload: event(`event_old_${i}`, now - 40 * DAY - i * 3 * 3_600_000),
        })
      const recent = [1, 2, 3].map((d) => event(`event_recent_${d}`, now - d * DAY))
      const upcoming = [1, 2, 3].map((d) => event(`event_next_${d}`, now + d * DAY))
      for (const payload of [...recent, ...upcoming])
        await service.trigger('event.created', { account, lost: true, payload })

      const lists = () => service.eventLists.requests
      let before = lists()
      const first = await app.handler.catchUp()
      expect(first).toMatchObject({ fed: 6, ran: 6, readWhole: 0, problems: [] })
      expect(lists() - before).toBe(2)

      before = lists()
      expect(await app.handler.catchUp()).toMatchObject({ fed: 0, readWhole: 0, problems: [] })
      expect(lists() - before).toBe(2)

      // Changes whose deliveries were lost: a reschedule ahead, a cancellation of last week.
      await service.trigger('event.rescheduled', {
        account,
        lost: true,
        payload: event('event_next_2', now + 5 * DAY),
      })
      await service.trigger('event.canceled', {
        account,
        lost: true,
        payload: { ...recent[2]!, state: 'canceled' },
      })
      before = lists()
      expect(await app.handler.catchUp()).toMatchObject({ fed: 2, ran: 2, problems: [] })
      expect(lists() - before).toBe(2)
      for (const id of ['event_next_2', 'event_recent_3'])
        expect(app.resources.get(`${account}|${id}`)).toEqual(
          service.events(account).find((e) => e.id === id),
        )
      // A catch-up from further back reads further: since 60 days ago takes in 161 more Events.
      before = lists()
      const deeper = await app.handler.catchUp({ since: now - 60 * DAY })
      expect(deeper).toMatchObject({ fed: 161, readWhole: 0 })
      expect(lists() - before).toBe(1 + 2)
    } finally {
      await app.stop()
      await service.close()
    }
  })
})
