import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LedgerEntry, ResourceMark } from '../../src/ledger/entry.js'
import {
  arrival,
  type Delivery,
  failedWith,
  finished,
  firstArrival,
  isNewer,
  markOf,
  precedenceOf,
  renewed,
  replayArrival,
} from '../../src/ledger/machine.js'

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
