import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ApiEvent } from '../../src/api/events.js'
import { type CatchUpSource, catchUp } from '../../src/catch-up/catch-up.js'
import { catchUpEnvelope } from '../../src/catch-up/difference.js'
import { catchUpWith } from '../../src/catch-up/handler-source.js'
import { createDeliveryLedger } from '../../src/catch-up/ledger.js'
import { digestOf, shapeOf } from '../../src/ledger/digest.js'
import type { ResourceMark } from '../../src/ledger/entry.js'
import { MemoryLedgerStore } from '../../src/ledger/memory.js'
import { parseEnvelope } from '../../src/webhooks/envelope.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import type { QueuedDelivery } from '../../src/worker/job.js'
import { queuedDelivery } from '../../src/worker/job.js'
import { runQueued } from '../../src/worker/run.js'

// The catch-up plan of one listed Event, by properties, and the sweep against a scripted API:
// a difference becomes one well-formed delivery whose id is the same for the same difference;
// no difference, no delivery; a failing account is reported and the others still caught up.

const mark = (
  event: Record<string, unknown> | undefined,
  by = 'payload_prev',
  appliedAt?: number,
): ResourceMark => {
  const shape = event === undefined ? undefined : shapeOf(event)
  return {
    resourceId: 'event_1',
    at: 0,
    rank: 1,
    by,
    ...(typeof event?.state === 'string' ? { state: event.state } : {}),
    ...(shape === undefined ? {} : { digest: shape.digest }),
    ...(shape?.when === undefined ? {} : { when: shape.when }),
    ...(appliedAt === undefined ? {} : { appliedAt }),
  }
}

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value

const anEvent = fc.record({
  id: fc.string({ minLength: 1, maxLength: 20 }),
  state: fc.constantFrom('confirmed', 'canceled', 'declined', 'awaiting_approval', 'weird'),
  start_at: fc.constantFrom('2030-01-01T09:00:00Z', '2030-01-02T09:00:00Z'),
  end_at: fc.constantFrom('2030-01-01T09:30:00Z', '2030-01-02T09:30:00Z'),
  extra: json,
})

/**
 * A scripted `GET /v1/events` that honours `period` as the service does (an Event without a
 * `start_at` is listed as upcoming).
 */
function byPeriod(make: () => AsyncIterable<ApiEvent>, now = Date.now()) {
  return async function* ({ period }: { period?: string } = {}) {
    for await (const event of make()) {
      const past = Date.parse(String(event.start_at)) < now
      if (period === undefined || (period === 'past') === past) yield event
    }
  }
}

describe('the digest', () => {
  it('property: the same resource in any key order has one digest; a change anywhere, to a field known or unknown, changes it', () => {
    fc.assert(
      fc.property(json, fc.string({ maxLength: 6 }), json, (value, key, other) => {
        const resource = { value, [key]: value }
        const reordered = Object.fromEntries(Object.entries(resource).reverse())
        expect(digestOf(reordered)).toBe(digestOf(resource))
        const changed = { ...resource, [key]: other }
        if (JSON.stringify(other) !== JSON.stringify(value))
          expect(digestOf(changed)).not.toBe(digestOf(resource))
      }),
    )
  })

  it('property: one character changed anywhere in a long field (past the kept 64 KiB buffer too) changes it; trailing zero characters count', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(2_000, 70_000),
        fc.nat(),
        fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }),
        (size, at, char) => {
          const note = 'x'.repeat(size)
          const i = at % size
          const changed = note.slice(0, i) + char + note.slice(i + 1)
          if (changed !== note)
            expect(digestOf({ id: 'e', note: changed })).not.toBe(digestOf({ id: 'e', note }))
        },
      ),
      { numRuns: 50 },
    )
    expect(digestOf({ a: 'x' })).not.toBe(digestOf({ a: 'x\u0000' }))
    expect(digestOf({ a: 'x\u0000' })).not.toBe(digestOf({ a: 'x\u0000\u0000' }))
  })

  it('a string cannot pose as the fields around it; volatile fields are left out', () => {
    expect(digestOf({ a: 'x","b":"y' })).not.toBe(digestOf({ a: 'x', b: 'y' }))
    expect(digestOf({ a: '1' })).not.toBe(digestOf({ a: 1 }))
    const ignore = new Set(['read_at'])
    expect(digestOf({ a: 1, read_at: 'now' }, ignore)).toBe(
      digestOf({ a: 1, read_at: 'then' }, ignore),
    )
  })
})

describe('catchUpEnvelope', () => {
  it('property: a difference anywhere in the Event makes one envelope the handler parses, stamped with the time of its listing, its id fixed by key, Event, digest and the last applied', async () => {
    await fc.assert(
      fc.asyncProperty(
        anEvent,
        fc.option(anEvent, { nil: undefined }),
        fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
        async (event, before, key) => {
          const applied = before === undefined ? undefined : mark({ ...before, id: event.id })
          const made = await catchUpEnvelope(event, applied, key, 1_700_000_000_000)
          if (applied !== undefined && applied.digest === shapeOf(event).digest) {
            expect(made).toBeUndefined()
            return
          }
          expect(made).toBeDefined()
          const parsed = parseEnvelope(JSON.stringify(made))
          expect(parsed.id).toBe(made!.id)
          expect(parsed.payload).toEqual(event)
          expect(parsed.occurred_at).toBe(new Date(1_700_000_000_000).toISOString())
          const again = await catchUpEnvelope(event, applied, key, 1_800_000_000_000)
          expect(again!.id).toBe(made!.id)
          const otherKey = await catchUpEnvelope(event, applied, `${key ?? ''}x`, 0)
          expect(otherKey!.id).not.toBe(made!.id)
          if (applied !== undefined) {
            const afterAnother = await catchUpEnvelope(
              event,
              { ...applied, by: 'payload_other' },
              key,
              0,
            )
            expect(afterAnother!.id).not.toBe(made!.id)
          }
        },
      ),
    )
  })

  it('names the difference: a new state by what it is, new times as a reschedule, anything else (attendees, fields unknown today) as a change', async () => {
    const base = {
      id: 'e',
      state: 'confirmed',
      start_at: '2030-01-01T09:00:00Z',
      end_at: '2030-01-01T09:30:00Z',
      attendees: [{ id: 'a1', response_status: 'accepted' }],
    }
    const typeOf = async (event: Record<string, unknown>, applied?: ResourceMark) =>
      (await catchUpEnvelope(event as never, applied, 'k', 0))?.type
    expect(await typeOf(base)).toBe('event.created')
    expect(await typeOf({ ...base, state: 'awaiting_approval' })).toBe('event.requested')
    expect(await typeOf({ ...base, state: 'canceled' }, mark(base))).toBe('event.canceled')
    expect(await typeOf(base, mark({ ...base, state: 'canceled' }))).toBe('event.changed')
    expect(await typeOf({ ...base, start_at: '2030-01-02T09:00:00Z' }, mark(base))).toBe(
      'event.rescheduled',
    )
    expect(
      await typeOf({ ...base, attendees: [{ id: 'a1', response_status: 'declined' }] }, mark(base)),
    ).toBe('event.changed')
    expect(await typeOf({ ...base, surprise: 1 }, mark(base))).toBe('event.changed')
    expect(await typeOf(base, mark(base))).toBeUndefined()
    expect(await typeOf({ ...base, id: '' })).toBeUndefined()
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
        for (const key of Object.keys(lists)) yield { key, events: { list: byPeriod(lists[key]!) } }
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

  it('the handler: without a ledger, without handlers or a queue, or without a way to list, catchUp says what to set; with a client it catches one account up', async () => {
    await expect(createWebhookHandler({ secret: 's' }).catchUp()).rejects.toThrow(/ledger option/)
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore() })
    await expect(createWebhookHandler({ secret: 's', ledger }).catchUp()).rejects.toThrow(
      /has none and no queue: call it on the handler that has them/,
    )
    await expect(createWebhookHandler({ secret: 's', ledger }).replay('x')).rejects.toThrow(
      /replay\(\) runs the handlers where they are/,
    )
    await expect(
      createWebhookHandler({ secret: 's', ledger, onAny: () => {} }).catchUp(),
    ).rejects.toThrow(/subscriptions, or catchUp\(\{ client \}\)/)
    const seen: unknown[] = []
    const handler = createWebhookHandler({
      secret: 's',
      ledger,
      onAny: (e, c) => void seen.push([e.type, c.catchUp, c.account]),
    })
    const client = {
      events: {
        list: byPeriod(async function* () {
          yield { id: 'event_1', state: 'canceled' }
        }),
      },
    }
    expect(await handler.catchUp({ client })).toMatchObject({ accounts: 1, fed: 1, ran: 1 })
    expect(seen).toEqual([['event.canceled', true, undefined]])
    expect((await handler.catchUp({ client })).fed).toBe(0)
  })
})

describe('catch-up by default skips Events that ended before retention', () => {
  it('an Event that ended before retention.entryMs ago, with no mark (purged), is not fed; one that ended since, or with since: 0, is', async () => {
    const now = Date.parse('2030-06-01T00:00:00Z')
    const ledger = createDeliveryLedger({
      store: new MemoryLedgerStore(),
      now: () => now,
      retention: { entryMs: 30 * 86_400_000 },
    })
    const fed: string[] = []
    const handler = createWebhookHandler({
      secret: 's',
      ledger,
      onAny: (e) => void fed.push((e.payload as { id: string }).id),
    })
    const ended = (id: string, daysAgo: number) => ({
      id,
      state: 'confirmed',
      start_at: new Date(now - daysAgo * 86_400_000 - 3_600_000).toISOString(),
      end_at: new Date(now - daysAgo * 86_400_000).toISOString(),
    })
    const client = {
      events: {
        list: byPeriod(async function* () {
          yield ended('event_old', 31)
          yield ended('event_recent', 29)
        }),
      },
    }
    expect(await handler.catchUp({ client })).toMatchObject({ listed: 2, fed: 1 })
    expect(fed).toEqual(['event_recent'])
    expect(await handler.catchUp({ client, since: 0 })).toMatchObject({ fed: 1 })
    expect(fed).toEqual(['event_recent', 'event_old'])
  })
})

describe('catch-up per account', () => {
  it('two accounts see one Event and only one missed its cancellation: the catch-up feeds that one, under its own mark', async () => {
    // A clock that moves on at each reading: the listing begins after the live changes applied.
    let clock = Date.now()
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), now: () => clock++ })
    const event = { id: 'event_shared', state: 'confirmed', start_at: '2030-01-01T09:00:00Z' }
    const canceled = { ...event, state: 'canceled' }
    const live = (account: string, payload: object, type: string, at: string) =>
      ledger.deliver(
        {
          envelope: { id: `payload_${account}_${type}`, type, occurred_at: at, payload },
          key: `${account}:${type}`,
          account,
          text: '{}',
        },
        () => {},
      )
    expect(await live('a', event, 'event.created', '2030-01-01T00:00:00Z')).toBe('ran')
    expect(await live('b', event, 'event.created', '2030-01-01T00:00:00Z')).toBe('ran')
    expect(await live('a', canceled, 'event.canceled', '2030-01-01T00:00:01Z')).toBe('ran')
    const fed: string[] = []
    const report = await catchUpWith(
      ledger,
      {
        parse: parseEnvelope,
        dispatch: (envelope, context) => void fed.push(`${context.account}:${envelope.type}`),
      },
      {
        client: () => ({
          events: {
            list: byPeriod(async function* () {
              yield canceled
            }),
          },
        }),
        keys: async function* () {
          yield 'a'
          yield 'b'
        },
      },
    )
    expect(fed).toEqual(['b:event.canceled'])
    expect(report).toMatchObject({ accounts: 2, listed: 2, fed: 1, ran: 1 })
  })
})

describe('catch-up into a queue', () => {
  it('a worker that records the job before enqueue returns: counted queued, not a duplicate; the same difference found while its job waits is one job', async () => {
    // A clock that moves on at each reading: each listing begins after what was applied.
    let clock = Date.now()
    const ledger = createDeliveryLedger({ store: new MemoryLedgerStore(), now: () => clock++ })
    const ran: string[] = []
    const worker = createWebhookHandler({
      secret: 's',
      onAny: (e, c) => void ran.push(`${c.account}:${e.type}:${c.catchUp === true}`),
    })
    let inline = true
    const waiting: QueuedDelivery[] = []
    const app = createWebhookHandler({
      secret: 's',
      ledger,
      queue: {
        enqueue: async (event, context, delivery) => {
          const data = queuedDelivery(event, context, delivery)
          // The worker at its quickest: the job runs, and is recorded, before enqueue returns.
          if (inline)
            await runQueued({ handler: worker, ledger, claimMs: 1_000 }, data, data.key!, false)
          else waiting.push(data)
        },
      },
    })
    const listing = (state: string) => ({
      events: {
        list: byPeriod(async function* () {
          yield { id: 'event_1', state }
        }),
      },
    })
    const first = await app.catchUp({ client: listing('canceled') })
    expect(first).toMatchObject({ fed: 1, queued: 1, ran: 0, duplicates: 0 })
    expect(ran).toEqual(['undefined:event.canceled:true'])
    expect((await app.catchUp({ client: listing('canceled') })).fed).toBe(0)
    // The worker slow now: the same difference is found twice before its job runs.
    inline = false
    expect(await app.catchUp({ client: listing('declined') })).toMatchObject({ queued: 1 })
    expect(await app.catchUp({ client: listing('declined') })).toMatchObject({
      fed: 1,
      queued: 0,
      duplicates: 1,
    })
    expect(new Set(waiting.map((d) => d.key)).size).toBe(1)
    for (const data of waiting.splice(0))
      await runQueued({ handler: worker, ledger, claimMs: 1_000 }, data, data.key!, false)
    expect(ran).toEqual(['undefined:event.canceled:true', 'undefined:event.declined:true'])
  })
})

describe('catch-up against a hostile or mis-pointed API (real HTTP)', () => {
  it('feeds at most maxPerAccount a run (default 1,000), skips and reports items that are no Event (a null, a number, no id), and never aborts the account silently', async () => {
    const { createServer } = await import('node:http')
    const { createSchedulingClient } = await import('../../src/api/client.js')
    let served = 0
    const server = createServer((req, res) => {
      const after = new URL(req.url ?? '/', 'http://x').searchParams.get('after')
      const page = after === null ? 0 : Number(after) + 1
      const entries: unknown[] = Array.from({ length: 100 }, (_, i) => ({
        id: `event_${page}_${i}`,
        state: 'confirmed',
        start_at: '2030-01-01T00:00:00Z',
      }))
      if (page === 0) entries.splice(3, 0, null, 42, { state: 'confirmed' })
      served++
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ entries, metadata: { after: String(page) } }))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as { port: number }).port
      const api = createSchedulingClient({ baseUrl: `http://127.0.0.1:${port}/v1`, token: 'pat_1' })
      const seen: string[] = []
      const handler = createWebhookHandler({
        secret: 's',
        ledger: createDeliveryLedger({ store: new MemoryLedgerStore() }),
        onAny: (e) => void seen.push(e.type),
      })
      const report = await handler.catchUp({ client: api })
      expect(report).toMatchObject({ accounts: 1, fed: 1_000, ran: 1_000, malformed: 3, capped: 1 })
      expect(seen).toHaveLength(1_000)
      expect(served).toBe(10) // the cap reached on the 10th page: nothing read past it
      expect(report.problems.map((p) => p.error)).toEqual([
        '3 listed items were no Event (not an object, or no string id): skipped',
        'stopped after 1000 deliveries (maxPerAccount): the next catch-up goes on from there',
      ])
      // A smaller cap, and a list bound: reported, the deliveries before it fed.
      // The next run goes on from what is applied; a list bound ends it, reported, what was
      // listed before it fed.
      const bounded = await handler.catchUp({ client: api, maxPerAccount: 5_000, maxPages: 12 })
      expect(bounded.fed).toBe(200) // the 11th and 12th pages: the first ten are applied
      expect(bounded.capped).toBe(0)
      expect(bounded.problems.map((p) => p.error)).toContainEqual(
        expect.stringContaining('stopped after 12 pages, at maxPages 12'),
      )
      await expect(handler.catchUp({ client: api, maxPerAccount: 0 })).rejects.toThrow(
        /maxPerAccount must be/,
      )
      for (const budgetMs of [-1, 1.5, Number.NaN])
        await expect(handler.catchUp({ client: api, budgetMs })).rejects.toThrow(
          /budgetMs must be a whole number of ms, 0 or more/,
        )
      // A budget of 0 still lists the one account (each listing starts one at least).
      expect(await handler.catchUp({ client: api, budgetMs: 0 })).toMatchObject({
        accounts: 1,
        unfinished: false,
      })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
