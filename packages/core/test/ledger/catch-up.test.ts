import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CatchUpSource, catchUp, catchUpEnvelope } from '../../src/ledger/catch-up.js'
import { createDeliveryLedger } from '../../src/ledger/ledger.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import { parseEnvelope } from '../../src/webhooks/envelope.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'

// The catch-up plan of one listed Event, by properties, and the sweep against a scripted API:
// a difference becomes one well-formed delivery whose id is the same for the same difference;
// no difference, no delivery; a failing account is reported and the others still caught up.

const mark = (state: string | undefined, by = 'payload_prev') => ({
  resourceId: 'event_1',
  at: 0,
  rank: 1,
  by,
  ...(state === undefined ? {} : { state }),
})

describe('catchUpEnvelope', () => {
  it('property: a difference makes one envelope the handler parses, its id fixed by key, event, state and the last applied', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.constantFrom(
          'confirmed',
          'canceled',
          'declined',
          'awaiting_approval',
          'tentative',
          'weird',
        ),
        fc.option(fc.constantFrom('confirmed', 'canceled'), { nil: undefined }),
        fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        async (id, state, appliedState, key) => {
          const applied = appliedState === undefined ? undefined : mark(appliedState)
          const made = await catchUpEnvelope({ id, state }, applied, key, 1_700_000_000_000)
          if (applied !== undefined && applied.state === state) {
            expect(made).toBeUndefined()
            return
          }
          expect(made).toBeDefined()
          const parsed = parseEnvelope(JSON.stringify(made))
          expect(parsed.id).toBe(made!.id)
          expect((parsed.payload as { id: string }).id).toBe(id)
          expect(parsed.occurred_at).toBe(new Date(1_700_000_000_000).toISOString())
          const again = await catchUpEnvelope({ id, state }, applied, key, 1_800_000_000_000)
          expect(again!.id).toBe(made!.id)
          const otherKey = await catchUpEnvelope({ id, state }, applied, `${key ?? ''}x`, 0)
          expect(otherKey!.id).not.toBe(made!.id)
          const afterAnother = await catchUpEnvelope(
            { id, state },
            applied && mark(applied.state, 'payload_other'),
            key,
            0,
          )
          if (applied !== undefined) expect(afterAnother!.id).not.toBe(made!.id)
        },
      ),
    )
  })

  it('names the change by the state: a first sight of a confirmed Event is a creation, a later one a change', async () => {
    expect((await catchUpEnvelope({ id: 'e', state: 'confirmed' }, undefined, 'k', 0))!.type).toBe(
      'event.created',
    )
    expect(
      (await catchUpEnvelope({ id: 'e', state: 'confirmed' }, mark('canceled'), 'k', 0))!.type,
    ).toBe('event.changed')
    expect(
      (await catchUpEnvelope({ id: 'e', state: 'canceled' }, mark('confirmed'), 'k', 0))!.type,
    ).toBe('event.canceled')
    expect(
      (await catchUpEnvelope({ id: 'e', state: 'awaiting_approval' }, undefined, 'k', 0))!.type,
    ).toBe('event.requested')
    expect(await catchUpEnvelope({ id: '', state: 'confirmed' }, undefined, 'k', 0)).toBeUndefined()
  })
})

describe('catchUp', () => {
  it('an account whose list fails is reported with a cleaned error; the others are caught up; events that ended before since are skipped', async () => {
    const fed: string[] = []
    const lists: Record<
      string,
      () => AsyncIterable<{ id: string; state: string; end_at?: string }>
    > = {
      good: async function* () {
        yield { id: 'event_a', state: 'confirmed', end_at: '2030-01-01T00:00:00Z' }
        yield { id: 'event_old', state: 'canceled', end_at: '2001-01-01T00:00:00Z' }
      },
      bad: async function* () {
        yield { id: 'event_b', state: 'confirmed' }
        throw Object.assign(new Error('rate limited for good'), { code: 'api_error' })
      },
    }
    const source: CatchUpSource = {
      async *accounts() {
        for (const key of Object.keys(lists)) yield { key, events: { list: lists[key]! } }
      },
      feed: async (delivery) => {
        fed.push(`${delivery.account}:${(delivery.envelope.payload as { id: string }).id}`)
        return 'ran'
      },
    }
    const report = await catchUp({ now: () => 0, mark: async () => undefined }, source, {
      since: new Date('2020-01-01T00:00:00Z'),
    })
    expect(fed.sort()).toEqual(['bad:event_b', 'good:event_a'])
    expect(report).toMatchObject({ accounts: 2, listed: 3, fed: 2, ran: 2 })
    expect(report.problems).toEqual([
      { key: 'bad', error: 'Error (api_error): rate limited for good' },
    ])
  })

  it('the handler: without a ledger, or without a way to list, catchUp says what to set; with a client it catches one account up', async () => {
    await expect(createWebhookHandler({ secret: 's' }).catchUp()).rejects.toThrow(/ledger option/)
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    await expect(createWebhookHandler({ secret: 's', ledger }).catchUp()).rejects.toThrow(
      /subscriptions, or catchUp\(\{ client \}\)/,
    )
    const seen: unknown[] = []
    const handler = createWebhookHandler({
      secret: 's',
      ledger,
      onAny: (e, c) => void seen.push([e.type, c.catchUp, c.account]),
    })
    const client = {
      events: {
        list: async function* () {
          yield { id: 'event_1', state: 'canceled' }
        },
      },
    }
    expect(await handler.catchUp({ client })).toMatchObject({ accounts: 1, fed: 1, ran: 1 })
    expect(seen).toEqual([['event.canceled', true, undefined]])
    expect((await handler.catchUp({ client })).fed).toBe(0)
  })
})
