import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LedgerEntry, ResourceMark } from '../../src/ledger/entry.js'
import {
  arrival,
  type Delivery,
  failedWith,
  finished,
  firstArrival,
  renewed,
  replayArrival,
} from '../../src/ledger/machine.js'
import { isNewer, markOf, ordered, precedenceOf } from '../../src/ledger/order.js'

// The ledger's state machine, by properties over any sequence of arrivals, finishes,
// failures, lease lapses and replays: the invariants every store and process relies on.

const delivery: Delivery = {
  id: 'payload_1',
  payloadId: 'payload_1',
  type: 'event.created',
  source: 'webhook',
}
const LEASE = 100
const MAX = 3

type Step =
  | { kind: 'arrive'; owner: string; dt: number }
  | { kind: 'replay'; owner: string; dt: number }
  | { kind: 'finish'; owner: string; dt: number }
  | { kind: 'fail'; owner: string; dt: number }
  | { kind: 'renew'; owner: string; dt: number }

const step = fc.record({
  kind: fc.constantFrom('arrive', 'replay', 'finish', 'fail', 'renew'),
  owner: fc.constantFrom('a', 'b', 'c'),
  dt: fc.integer({ min: 0, max: 150 }),
}) as fc.Arbitrary<Step>

describe('the ledger state machine', () => {
  it('property: whatever the sequence, handlers never run twice at once on a live lease, attempts only grow, dead only past maxAttempts, done stays done for the service', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let now = 0
        let entry: LedgerEntry = firstArrival(delivery, { owner: 'first', now, leaseMs: LEASE })
        for (const s of steps) {
          now += s.dt
          const claim = { owner: s.owner, now, leaseMs: LEASE }
          const before = entry
          if (s.kind === 'arrive' || s.kind === 'replay') {
            const decided =
              s.kind === 'arrive' ? arrival(entry, claim) : replayArrival(entry, claim)
            const liveElsewhere =
              (entry.status === 'processing' || entry.status === 'received') &&
              (entry.leaseUntil ?? 0) > now
            if (liveElsewhere) expect(decided.action).toBe('busy')
            if (s.kind === 'arrive' && ['done', 'stale', 'dead'].includes(entry.status))
              expect(decided).toEqual({ action: 'skip', status: entry.status })
            if (decided.action === 'run') {
              expect(liveElsewhere).toBe(false)
              expect(decided.entry.attempts).toBe(before.attempts + 1)
              expect(decided.entry.owner).toBe(s.owner)
              expect(decided.entry.leaseUntil).toBe(now + LEASE)
              entry = decided.entry
            }
          } else {
            const next =
              s.kind === 'finish'
                ? finished(entry, s.owner, now)
                : s.kind === 'fail'
                  ? failedWith(entry, s.owner, 'Error: no', now, MAX)
                  : renewed(entry, claim)
            // Only the holder of a running entry moves it on.
            if (entry.status !== 'processing' || entry.owner !== s.owner)
              expect(next).toBeUndefined()
            else {
              expect(next).toBeDefined()
              entry = next!
            }
          }
          expect(entry.attempts).toBeGreaterThanOrEqual(before.attempts)
          if (entry.status === 'dead') expect(entry.attempts).toBeGreaterThanOrEqual(MAX)
          if (entry.status === 'processing') expect(entry.owner).toBeDefined()
          else expect(entry.owner).toBeUndefined()
          expect(entry.id).toBe(delivery.id)
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    )
  })

  it('a failure below maxAttempts is failed and runs again on the next arrival; at maxAttempts it is dead and only a replay runs it', () => {
    let entry = firstArrival(delivery, { owner: 'a', now: 0, leaseMs: LEASE })
    for (let attempt = 1; attempt < MAX; attempt++) {
      entry = failedWith(entry, 'a', 'Error: no', attempt, MAX)!
      expect(entry.status).toBe('failed')
      const again = arrival(entry, { owner: 'a', now: attempt, leaseMs: LEASE })
      expect(again.action).toBe('run')
      entry = (again as { entry: LedgerEntry }).entry
    }
    entry = failedWith(entry, 'a', 'Error: no', 10, MAX)!
    expect(entry.status).toBe('dead')
    expect(entry.lastError).toBe('Error: no')
    expect(arrival(entry, { owner: 'b', now: 11, leaseMs: LEASE })).toEqual({
      action: 'skip',
      status: 'dead',
    })
    const replayed = replayArrival(entry, { owner: 'b', now: 11, leaseMs: LEASE })
    expect(replayed.action).toBe('run')
    expect((replayed as { entry: LedgerEntry }).entry.source).toBe('replay')
  })

  it('a holder whose lease lapsed is taken over, and can then neither finish nor fail the new run', () => {
    const first = firstArrival(delivery, { owner: 'a', now: 0, leaseMs: LEASE })
    expect(arrival(first, { owner: 'b', now: LEASE - 1, leaseMs: LEASE })).toEqual({
      action: 'busy',
    })
    const taken = arrival(first, { owner: 'b', now: LEASE, leaseMs: LEASE })
    expect(taken.action).toBe('run')
    const entry = (taken as { entry: LedgerEntry }).entry
    expect(finished(entry, 'a', LEASE + 1)).toBeUndefined()
    expect(failedWith(entry, 'a', 'x', LEASE + 1, MAX)).toBeUndefined()
    expect(finished(entry, 'b', LEASE + 1)?.status).toBe('done')
  })
})

describe('ordering per resource', () => {
  const at = (iso: string, type: string, by: string): ResourceMark =>
    markOf({
      ...delivery,
      id: by,
      type,
      resourceId: 'event_1',
      occurredAt: iso,
      status: 'received',
      attempts: 0,
      receivedAt: 0,
      updatedAt: 0,
    })!

  it('a later occurred_at wins; at the same instant a cancellation outranks a creation; a replay of the last applied is not stale', () => {
    const created = at('2024-05-01T10:00:00Z', 'event.created', 'p1')
    const canceled = at('2024-05-01T10:00:00Z', 'event.canceled', 'p2')
    const later = at('2024-05-01T10:00:01Z', 'event.created', 'p3')
    expect(isNewer(canceled, created)).toBe(true)
    expect(isNewer(created, canceled)).toBe(false)
    expect(isNewer(later, canceled)).toBe(true)
    expect(isNewer(created, created)).toBe(true)
    expect(isNewer(created, undefined)).toBe(true)
    expect(precedenceOf('event.canceled')).toBeGreaterThan(precedenceOf('event.created'))
  })

  it("a live change made in a listing's very millisecond is applied over the catch-up, whatever its type", () => {
    // Found by the simulation below (seed 843887356): an event.created at the listing's time
    // ranked below the catch-up's event.changed and was taken for a change the listing showed.
    const iso = '2024-05-01T10:00:00.123Z'
    const listing = { ...at(iso, 'event.changed', 'c0'), listedAt: Date.parse(iso) }
    expect(isNewer(at(iso, 'event.created', 'p4'), listing)).toBe(true)
    expect(isNewer(at('2024-05-01T10:00:00.122Z', 'event.canceled', 'p3'), listing)).toBe(false)
    // Between two live changes the tie is still broken by type.
    expect(isNewer(at(iso, 'event.created', 'p4'), at(iso, 'event.changed', 'p5'))).toBe(false)
  })

  it('an entry without a resource or a readable time has no mark (never stale)', () => {
    const base = {
      ...delivery,
      status: 'received' as const,
      attempts: 0,
      receivedAt: 0,
      updatedAt: 0,
    }
    expect(markOf(base)).toBeUndefined()
    expect(markOf({ ...base, resourceId: 'e', occurredAt: 'not a time' })).toBeUndefined()
  })

  it("property: applying any shuffle of a resource's deliveries through the guard ends on the newest", () => {
    const types = ['event.created', 'event.changed', 'event.rescheduled', 'event.canceled']
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ t: fc.integer({ min: 0, max: 5 }), type: fc.constantFrom(...types) }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.func(fc.integer()),
        (events, order) => {
          const marks = events.map((e, i) =>
            at(new Date(Date.UTC(2024, 4, 1, 10, 0, e.t)).toISOString(), e.type, `p${i}`),
          )
          const shuffled = [...marks].sort((a, b) => order(a.by) - order(b.by))
          let applied: ResourceMark | undefined
          for (const mark of shuffled) if (isNewer(mark, applied)) applied = mark
          const newest = marks.reduce((best, m) =>
            isNewer(m, best) && !(m.at === best.at && m.rank === best.rank) ? m : best,
          )
          expect(applied!.at).toBe(newest.at)
          expect(applied!.rank).toBe(newest.rank)
        },
      ),
    )
  })
})

describe('a replay under the claim a live retry takes', () => {
  it('property: whatever the entry, a replay never runs one running on a live lease, nor a done one unless asked to run it again; it runs a failed, dead or stale one', () => {
    const statuses = ['received', 'processing', 'done', 'failed', 'dead', 'stale'] as const
    fc.assert(
      fc.property(
        fc.constantFrom(...statuses),
        fc.boolean(),
        fc.integer({ min: 0, max: 200 }),
        (status, again, now) => {
          const entry: LedgerEntry = {
            ...firstArrival(delivery, { owner: 'a', now: 0, leaseMs: LEASE }),
            status,
          }
          const decided = replayArrival(entry, { owner: 'b', now, leaseMs: LEASE }, again)
          if (status === 'processing' || status === 'received')
            expect(decided.action).toBe(now < LEASE ? 'busy' : 'run')
          else if (status === 'done')
            expect(decided).toEqual(
              again
                ? expect.objectContaining({ action: 'run' })
                : { action: 'skip', status: 'done' },
            )
          else expect(decided.action).toBe('run')
          if (decided.action === 'run') expect(decided.entry.source).toBe('replay')
        },
      ),
    )
  })
})

describe('catch-up against live changes (the ordering guard, simulated)', () => {
  // An Event changes n times (true times t_i, stamped by the service to the millisecond, or to
  // the second with the changes a second or more apart: within one second only their types
  // would order them); each
  // change is delivered after a delay or lost; catch-up lists it at L (the state of the last
  // change before L) and applies after a delay, listing again (up to three passes) when a live
  // change overtook it. Deliveries run one at a time in order of arrival, as the Event's hold
  // runs them. Stamped to the second, the changes lost are older than the listing's second: a
  // late copy of one made in that second is taken for a change made while it listed.
  const scenario = fc.record({
    gaps: fc.array(fc.integer({ min: 1, max: 2_500 }), { minLength: 1, maxLength: 8 }),
    coarse: fc.boolean(),
    delays: fc.array(fc.integer({ min: 0, max: 4_000 }), { minLength: 8, maxLength: 8 }),
    lost: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    listAfter: fc.integer({ min: -500, max: 20_000 }),
    applyDelays: fc.array(fc.integer({ min: 0, max: 800 }), { minLength: 3, maxLength: 3 }),
    types: fc.array(
      fc.constantFrom('event.rescheduled', 'event.changed', 'event.canceled', 'event.created'),
      { minLength: 8, maxLength: 8 },
    ),
  })

  it('property: the Event ends as the API has it; a live change made after the listing is never made stale by the catch-up', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const base = 1_700_000_000_000
        const times: number[] = []
        let t = base
        for (const gap of s.gaps) {
          t += s.coarse ? 1_000 + gap : gap
          times.push(t)
        }
        const n = times.length
        const L1 = base + s.listAfter
        // The service's time of a change: to the millisecond, or to the second (no fraction).
        const stamp = (at: number) =>
          s.coarse
            ? new Date(Math.floor(at / 1000) * 1000).toISOString().replace('.000Z', 'Z')
            : new Date(at).toISOString()
        const entryOf = (i: number, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
          ...delivery,
          id: `p${i}`,
          type: i === 0 ? 'event.created' : s.types[i - 1]!,
          resourceId: 'event_1',
          resourceDigest: `v${i}`,
          occurredAt: stamp(i === 0 ? base - 60_000 : times[i - 1]!),
          status: 'processing',
          attempts: 1,
          receivedAt: 0,
          updatedAt: 0,
          ...extra,
        })
        // Change 0 was applied long before; the others arrive, or are lost.
        let mark: ResourceMark | undefined = markOf(entryOf(0), base - 60_000)
        let version = 0
        type Arrival = { at: number; entry: LedgerEntry; live: boolean; trueTime?: number }
        const arrivals: Arrival[] = []
        for (let i = 1; i <= n; i++) {
          const at = times[i - 1]!
          if (s.lost[i - 1] && at < L1 - (s.coarse ? 1_000 : 0)) continue
          arrivals.push({ at: at + s.delays[i - 1]!, entry: entryOf(i), live: true, trueTime: at })
        }
        const listed = (L: number) => times.filter((time) => time < L).length
        const listings = new Map<string, number>()
        const catchUpAt = (L: number, pass: number): Arrival => {
          const v = listed(L)
          listings.set(`c${pass}`, L)
          return {
            at: L + s.applyDelays[pass]!,
            live: false,
            entry: entryOf(v, {
              id: `c${pass}`,
              type: 'event.changed',
              source: 'catch-up',
              listedAt: L,
              occurredAt: new Date(L).toISOString(),
            }),
          }
        }
        arrivals.push(catchUpAt(L1, 0))
        let pass = 0
        while (arrivals.length > 0) {
          arrivals.sort((a, b) => a.at - b.at)
          const next = arrivals.shift()!
          // Catch-up compares before it feeds: the same digest feeds nothing.
          if (!next.live && mark?.digest === next.entry.resourceDigest) continue
          const before = mark
          const order = ordered(next.entry, mark)
          if (order.action === 'run') {
            mark = { ...(order.mark ?? markOf(next.entry)!), appliedAt: next.at }
            version = Number(next.entry.resourceDigest!.slice(1))
          } else if (next.live && before?.by.startsWith('c')) {
            // A live change stale against a catch-up's mark: only one made before its listing
            // (the listing showed it), never one made after.
            expect(next.trueTime!).toBeLessThan(listings.get(before!.by)!)
          }
          if (order.action === 'stale' && !next.live && pass < 2) {
            pass++
            arrivals.push(catchUpAt(next.at, pass))
          }
        }
        // Three passes all overtaken by live changes may leave it for the next catch-up.
        if (pass < 2 || version === n) expect(version).toBe(n)
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2_000) },
    )
  })
})
