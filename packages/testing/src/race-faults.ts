import assert from 'node:assert/strict'
import { ConfigError } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './conformance-options.js'
import type { RefreshRaceOptions } from './race-types.js'
import { runRefreshRace } from './refresh-race.js'

export interface RefreshRaceFaultsOptions {
  /** Your test runner's `describe`. */
  describe: StoreConformanceOptions['describe']
  /** Your test runner's `it`; the third argument is a time-out in ms (vitest, jest). */
  it: (name: string, fn: () => Promise<void>, timeoutMs?: number) => unknown
  /** The module `runRefreshRace` imports in every process (see `RefreshRaceOptions.storeModule`). */
  storeModule: RefreshRaceOptions['storeModule']
  /** Runs before each race: a fresh key prefix or schema, say. */
  prepare?: () => void | Promise<void>
  /** A name for the suite. Default `refresh race through faults`. */
  name?: string
}

/**
 * The refresh race through what production does, for a store shared between processes: the
 * lease holder SIGKILLed at random instants of its refresh and after the answer (the crash
 * window), SIGTERMed at random instants (its `close()` finishing the refresh), and its store
 * connection cut at the write (with the module's `cutConnection(store)` when it has one).
 * Against a strict server, and one with a reuse grace period, as the README's fault table
 * says. Each case takes from a few seconds to half a minute.
 *
 * @example
 * ```ts
 * runRefreshRaceFaults({ describe, it, storeModule: new URL('./race-store.mjs', import.meta.url) })
 * ```
 */
export function runRefreshRaceFaults(options: RefreshRaceFaultsOptions): void {
  const { describe, it, storeModule } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function' || storeModule === undefined) {
    throw new ConfigError(
      'runRefreshRaceFaults: pass { describe, it, storeModule } (the store module as for runRefreshRace).',
    )
  }
  const race = async (overrides: Partial<RefreshRaceOptions>) => {
    await options.prepare?.()
    return runRefreshRace({ storeModule, ...overrides })
  }
  describe(options.name ?? 'refresh race through faults', () => {
    it('the lease holder SIGKILLed at random instants of its refresh, against a server with a reuse grace period: nothing lost', async () => {
      const report = await race({
        stop: 'random',
        stopRounds: 6,
        expiries: 7,
        processes: 4,
        callers: 10,
        server: { reuseGraceMs: 15_000 },
      })
      assert.deepEqual(report.problems, [])
      assert.equal(report.rounds.filter((r) => r.killed).length, 6)
      assert.equal(report.rounds.filter((r) => r.lost).length, 0)
    }, 120_000)

    it('killed after the answer, before the write (the crash window): a strict server loses the connection, one with a grace period does not', async () => {
      const strict = await race({ stop: 'after-answer', expiries: 1, processes: 3, callers: 5 })
      assert.equal(strict.rounds[0]?.killed, true)
      assert.equal(strict.rounds[0]?.lost, true, 'the strict server revoked the grant')
      const grace = await race({
        stop: 'after-answer',
        expiries: 2,
        processes: 3,
        callers: 5,
        server: { reuseGraceMs: 15_000 },
      })
      assert.deepEqual(grace.problems, [])
      assert.equal(grace.rounds[0]?.killed, true)
      assert.equal(grace.rounds[0]?.lost, false)
      assert.equal(grace.rounds[0]?.refreshes, 2, 'the next holder presented the spent token again')
    }, 120_000)

    it('the store connection cut at the write after the refresh: the write is retried, nothing lost (strict server)', async () => {
      const report = await race({ cutStoreAtWrite: true, expiries: 2 })
      assert.deepEqual(report.problems, [])
      assert.deepEqual(
        report.rounds.map((r) => [r.refreshRequests, r.lost]),
        [
          [1, false],
          [1, false],
        ],
      )
    }, 60_000)

    it('SIGTERM to the lease holder at random instants: it finishes its refresh and exits, nothing lost (strict server)', async () => {
      const report = await race({
        stop: 'terminate',
        stopRounds: 5,
        expiries: 6,
        processes: 4,
        callers: 10,
      })
      assert.deepEqual(report.problems, [])
      assert.equal(report.rounds.filter((r) => r.killed).length, 5)
      for (const round of report.rounds) assert.equal(round.refreshRequests, 1)
    }, 120_000)
  })
}
