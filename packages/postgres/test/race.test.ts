import { raceWhileSweeping } from '@scheduling-kit/conformance'
import { createCredentialCipher, generateCredentialKey } from '@scheduling-kit/core'
import { runRefreshRace, runRefreshRaceFaults } from '@scheduling-kit/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { PostgresTokenStore } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

// Eight OS processes x 25 callers, each with its own pg Pool and token manager, against a
// strict token endpoint (single-use rotating refresh tokens).
const storeModule = new URL('./fixtures/race-store.mjs', import.meta.url)

beforeAll(async () => {
  process.env.RACE_SCHEMA = await migratedSchema('race')
})

it('8 processes x 25 callers, 5 expiries: exactly one refresh per expiry, no caller error', async () => {
  const report = await runRefreshRace({ storeModule })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
    Array(5).fill([1, 200, 0]),
  )
}, 180_000)

it('the lease holder killed with SIGKILL mid-refresh: the others go on once its lease expires', async () => {
  const report = await runRefreshRace({ storeModule, killLeaseHolder: true })
  expect(report.problems).toEqual([])
  const [first, ...rest] = report.rounds
  expect(first!.killed).toBe(true)
  expect(first!.callers).toBe(7 * 25)
  expect(first!.durationMs).toBeGreaterThanOrEqual(2_800) // the others waited for its 3 s lease
  for (const round of rest) expect(round.callers).toBe(200)
}, 180_000)

// Killed at random instants, after the answer, SIGTERMed, its connection cut at the write.
runRefreshRaceFaults({ describe, it, storeModule })

it('a key rotation halfway through the fleet while 8 processes refresh, reencrypt() sweeping all along: one refresh per expiry, no error, every row on the new key at the end', async () => {
  const keys = { k1: generateCredentialKey(), k2: generateCredentialKey() }
  process.env.RACE_CIPHER = JSON.stringify({ keys, currents: ['k1', 'k2'] })
  const schema = await migratedSchema('rotation')
  const previous = process.env.RACE_SCHEMA
  process.env.RACE_SCHEMA = schema
  const rotated = createCredentialCipher({ keys, current: 'k2' })
  const db = pool(2)
  const sweeper = new PostgresTokenStore({ pool: db, schema, cipher: rotated })
  try {
    const { report, problems, sweeps } = await raceWhileSweeping(
      () => runRefreshRace({ storeModule }),
      () => sweeper.reencrypt(),
    )
    expect(report.problems).toEqual([])
    expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
      Array(5).fill([1, 200, 0]),
    )
    expect(problems).toEqual([])
    expect(sweeps).toBeGreaterThan(0)
    expect((await sweeper.reencrypt()).failed).toEqual([])
    const { rows } = await db.query(
      `SELECT record #>> '{}' AS raw FROM "${schema}".scheduling_kit_tokens WHERE record IS NOT NULL`,
    )
    expect(rows.length).toBeGreaterThanOrEqual(1)
    expect(rows.map((r) => rotated.keyIdOf(r.raw))).toEqual(rows.map(() => 'k2'))
  } finally {
    delete process.env.RACE_CIPHER
    process.env.RACE_SCHEMA = previous
  }
}, 120_000)
