import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type CatchUpSource, catchUp } from '../../src/catch-up/catch-up.js'
import { CatchUpProgress } from '../../src/catch-up/progress.js'
import { caughtUp, closes, startRun } from '../../src/catch-up/run.js'
import { MemorySweepStore, type SweepStore } from '../../src/sweep/store.js'

// A resumable catch-up: the plan by properties (a run is taken up only under way and for the
// same since; an account passed over only if caught up since the run began), its executor
// through a call stopped at every write of its opening, and catchUp stopped halfway and taken
// up again over a MemorySweepStore.

const since = fc.option(fc.integer({ min: 0, max: 2e12 }), { nil: undefined })

describe('the resumable run, planned', () => {
  it('property: a run is taken up only when under way and for the same since (a time); else one starts now, after any run found', () => {
    fc.assert(
      fc.property(
        fc.option(fc.record({ startedAt: fc.integer({ min: -2e12, max: 2e12 }), since }), {
          nil: undefined,
        }),
        since,
        fc.integer({ min: 0, max: 2e12 }),
        (found, wanted, now) => {
          const start = startRun(found, wanted, now)
          const same =
            found !== undefined &&
            found.startedAt > 0 &&
            wanted !== undefined &&
            found.since === wanted
          expect(start).toEqual(
            same
              ? { kind: 'resume', startedAt: found.startedAt }
              : { kind: 'fresh', startedAt: Math.max(now, Math.abs(found?.startedAt ?? 0) + 1) },
          )
          // A fresh run never bears the start of the run found.
          if (!same && found !== undefined)
            expect(start.startedAt).not.toBe(Math.abs(found.startedAt))
        },
      ),
    )
  })

  it('property: an account is passed over only when its checkpoint names the run', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 2e12 })
          .chain((s) =>
            fc.tuple(
              fc.constant(s),
              fc.option(
                fc.oneof(fc.integer({ min: 0, max: 2e12 }), fc.integer({ min: s - 2, max: s + 2 })),
                { nil: undefined },
              ),
            ),
          ),
        ([startedAt, caughtUpIn]) => {
          expect(caughtUp(startedAt, caughtUpIn)).toBe(caughtUpIn === startedAt)
        },
      ),
    )
    expect(closes({ problems: [] })).toBe(true)
    expect(closes({ problems: [{}] })).toBe(false)
  })
})

/** A store whose writes fail from the `failAt`th on (0: the first), as a process stopped there. */
function stoppedAt(store: SweepStore, failAt: number): SweepStore {
  let writes = 0
  return {
    acquireLease: (...a) => store.acquireLease(...a),
    releaseLease: (...a) => store.releaseLease(...a),
    checkpoint: (name) => store.checkpoint(name),
    setCheckpoint: async (...a) => {
      if (writes++ >= failAt) throw new Error('stopped')
      return store.setCheckpoint(...a)
    },
  }
}

describe('the run kept in a SweepStore', () => {
  it('property: a call stopped at any write of its opening, then calls with any since: never one taken up for another since, nor one never opened', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom(1_000, 2_000),
        fc.constantFrom(1_000, 2_000, undefined),
        async (failAt, first, second) => {
          const store = new MemorySweepStore()
          // An earlier run under way for 1,000, opened at time 10.
          const earlier = await CatchUpProgress.open(store, 1_000, 10)
          expect(earlier.startedAt).toBe(10)
          const stopped = await CatchUpProgress.open(stoppedAt(store, failAt), first, 20).catch(
            () => undefined,
          )
          // Opened whole (no write failed, or it took the earlier one up: no write at all).
          const opened = stopped !== undefined
          const then = await CatchUpProgress.open(store, second, 30)
          const under = opened
            ? { since: first, startedAt: stopped.startedAt }
            : { since: 1_000, startedAt: 10 }
          // A stopped opening left the earlier run (its writes not begun) or none.
          const left = opened || failAt === 0 ? under : undefined
          const resumes = left !== undefined && second !== undefined && left.since === second
          expect(then.startedAt).toBe(resumes ? left.startedAt : 30)
        },
      ),
    )
  })

  it('fc.scheduler: two calls opening runs at once: each holds its own run, or takes up one of its own since; the run left names its since', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.constantFrom(1_000, 2_000),
        fc.constantFrom(1_000, 2_000),
        async (s, sinceA, sinceB) => {
          const store = new MemorySweepStore()
          const scheduled: SweepStore = {
            acquireLease: (...a) => store.acquireLease(...a),
            releaseLease: (...a) => store.releaseLease(...a),
            checkpoint: s.scheduleFunction((name) => store.checkpoint(name)),
            setCheckpoint: s.scheduleFunction((...a) => store.setCheckpoint(...a)),
          }
          const a = CatchUpProgress.open(scheduled, sinceA, 100)
          const b = CatchUpProgress.open(scheduled, sinceB, 200)
          await s.waitFor(Promise.all([a, b]))
          const [pa, pb] = [await a, await b]
          // A call holds a run of its own (started at or after its time), or the other's when
          // both are for the same since; two runs of their own are two runs.
          const own = (p: CatchUpProgress, now: number) => p.startedAt >= now
          expect(own(pa, 100) || (pa.startedAt === pb.startedAt && sinceA === sinceB)).toBe(true)
          expect(own(pb, 200) || (pa.startedAt === pb.startedAt && sinceA === sinceB)).toBe(true)
          if (pa.startedAt === pb.startedAt) expect(sinceA).toBe(sinceB)
          // The run left under way is one of theirs, and names the since of the call holding it.
          const run = await store.checkpoint('catch-up:run')
          const kept = await store.checkpoint('catch-up:run-since')
          if (run !== undefined && run.through > 0) {
            expect([pa.startedAt, pb.startedAt]).toContain(run.through)
            expect(kept?.through).toBe(run.through === pa.startedAt ? sinceA : sinceB)
          }
        },
      ),
    )
  })
})

describe('catchUp stopped halfway and taken up', () => {
  const keys = Array.from({ length: 40 }, (_, i) => `acct_${i}`)
  /** A source listing no Events, counting each account's lists; stopping after `stopAfter` accounts. */
  function source(
    listed: string[],
    stopAfter = Number.POSITIVE_INFINITY,
    failing = new Set<string>(),
  ): CatchUpSource {
    return {
      async *accounts() {
        let given = 0
        for (const key of keys) {
          if (given++ === stopAfter) throw new Error('the process stopped')
          yield {
            key,
            events: {
              // biome-ignore lint/correctness/useYield: an account with nothing to list
              list: async function* () {
                listed.push(key)
                if (failing.has(key)) throw new Error('the API failed')
              },
            },
          }
        }
      },
      feed: async () => 'ran',
    }
  }
  const ledger = (now: () => number) => ({ now, mark: async () => undefined })

  it('the next call with the same since lists only what the stopped run left and what failed; a run caught up closes; another since starts afresh', async () => {
    const store = new MemorySweepStore()
    // A clock that moves a millisecond each time it is read, as a run's listings follow its start.
    let now = 1_000
    const clock = () => ++now
    const options = { since: 500, progress: store, concurrency: 1 }
    const first: string[] = []
    await expect(catchUp(ledger(clock), source(first, 15), options)).rejects.toThrow('stopped')
    expect(new Set(first).size).toBe(15)

    now = 2_000
    const second: string[] = []
    const failing = new Set(['acct_30'])
    const resumed = await catchUp(ledger(clock), source(second, undefined, failing), options)
    expect(resumed).toMatchObject({ resumed: 15, accounts: 25 })
    expect(new Set(second)).toEqual(new Set(keys.slice(15)))

    // acct_30 failed: the run stays open, and the next call lists it alone.
    now = 3_000
    const third: string[] = []
    expect(await catchUp(ledger(clock), source(third), options)).toMatchObject({
      resumed: 39,
      accounts: 1,
      problems: [],
    })
    expect(new Set(third)).toEqual(new Set(['acct_30']))

    // Every account caught up: closed. The same since again lists all of them.
    now = 4_000
    const fourth: string[] = []
    expect(await catchUp(ledger(clock), source(fourth), options)).toMatchObject({
      resumed: 0,
      accounts: 40,
    })
    // Stopped again, then another since: afresh.
    const fifth: string[] = []
    await expect(catchUp(ledger(clock), source(fifth, 10), options)).rejects.toThrow('stopped')
    const sixth: string[] = []
    expect(await catchUp(ledger(clock), source(sixth), { ...options, since: 600 })).toMatchObject({
      resumed: 0,
      accounts: 40,
    })
  })

  it('a call whose accounts stop coming ends only when its other workers have: nothing is listed after it rejected, and what they finished is caught up', async () => {
    const store = new MemorySweepStore()
    let now = 1_000
    const listed: string[] = []
    const slow: CatchUpSource = {
      async *accounts() {
        for (const [i, key] of keys.entries()) {
          if (i === 10) throw new Error('the process stopped')
          yield {
            key,
            events: {
              // biome-ignore lint/correctness/useYield: an account with nothing to list
              list: async function* () {
                for (let turn = 0; turn < 20; turn++) await new Promise(setImmediate)
                listed.push(key)
              },
            },
          }
        }
      },
      feed: async () => 'ran',
    }
    const options = { since: 500, progress: store, concurrency: 4 }
    await expect(
      catchUp(
        ledger(() => ++now),
        slow,
        options,
      ),
    ).rejects.toThrow('stopped')
    const atRejection = listed.length
    for (let turn = 0; turn < 50; turn++) await new Promise(setImmediate)
    expect(listed.length).toBe(atRejection)
    expect(new Set(listed).size).toBe(10)
    const next: string[] = []
    expect(
      await catchUp(
        ledger(() => ++now),
        source(next),
        options,
      ),
    ).toMatchObject({
      resumed: 10,
      accounts: 30,
    })
  })

  it('refuses a progress that is no SweepStore', async () => {
    await expect(
      catchUp(
        ledger(() => 0),
        source([]),
        { progress: {} as SweepStore },
      ),
    ).rejects.toThrow(/progress must be a SweepStore/)
  })
})
