import { isSchedulingError } from '@scheduling-kit/core'
import {
  runDedupeStoreConformance,
  runLedgerScenarios,
  runLedgerStoreConformance,
  runRateCapStoreConformance,
  runRetryStoreConformance,
  runSubscriptionStoreConformance,
  runSweepStoreConformance,
  runTokenStoreConformance,
} from '@scheduling-kit/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  PostgresDedupeStore,
  PostgresLedgerStore,
  PostgresSubscriptionStore,
  PostgresSweepStore,
  PostgresTokenStore,
} from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

const shared = pool(20)
let schema: string
beforeAll(async () => {
  schema = await migratedSchema('stores', shared)
})

runTokenStoreConformance(() => new PostgresTokenStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresTokenStore: TokenStore conformance',
})

runDedupeStoreConformance(
  (timing) => new PostgresDedupeStore({ pool: shared, schema, ...timing }),
  {
    describe,
    it,
    name: 'PostgresDedupeStore: DedupeStore conformance',
  },
)

runSubscriptionStoreConformance(() => new PostgresSubscriptionStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresSubscriptionStore: SubscriptionStore conformance',
})

runRetryStoreConformance(() => new PostgresSweepStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresSweepStore: RetryStore conformance',
})

runSweepStoreConformance(() => new PostgresSweepStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresSweepStore: SweepStore conformance',
  // Typed columns hold no NaN or text (those cases skipped); a version of 0 they do.
  corrupt: async (name, field, value) => {
    const { rowCount } = await shared.query(
      `UPDATE "${schema}"."scheduling_kit_subscriptions$sweeps" SET ${field} = $2 WHERE name = $1`,
      [name, value],
    )
    expect(rowCount).toBe(1)
  },
})

const RATE_COLUMNS = {
  perSecond: 'rate_per_second',
  movedAt: 'rate_moved_at',
  pausedUntil: 'rate_paused_until',
  lastAt: 'rate_last_at',
} as const
runRateCapStoreConformance(() => new PostgresSweepStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresSweepStore: RateCapStore conformance',
  // A double precision column holds NaN and the infinities; text it refuses (the case skipped).
  corrupt: async (name, field, value) => {
    const { rowCount } = await shared.query(
      `UPDATE "${schema}"."scheduling_kit_subscriptions$sweeps" SET ${RATE_COLUMNS[field]} = $2::float8 WHERE name = $1`,
      [`rate:${name}`, value],
    )
    expect(rowCount).toBe(1)
  },
})

describe('PostgresSweepStore: a rate row whose rate was wiped', () => {
  it('a NULL rate (a hostile or broken write) starts again at the ceiling: the next turn is given, not an error for ever', async () => {
    const store = new PostgresSweepStore({ pool: shared, schema })
    const limits = { ceiling: 20, floor: 0.2, raiseEveryMs: 10_000 }
    const now = 1_900_000_000_000
    await store.reserveTurn('wiped', limits, now)
    await shared.query(
      `UPDATE "${schema}"."scheduling_kit_subscriptions$sweeps"
       SET rate_per_second = NULL, rate_last_at = 'Infinity' WHERE name = 'rate:wiped'`,
    )
    expect(await store.reserveTurn('wiped', limits, now + 1)).toEqual({
      at: now + 1,
      perSecond: 20,
    })
    await store.throttleRate('wiped', limits, now + 2, undefined)
    expect((await store.reserveTurn('wiped', limits, now + 3)).perSecond).toBe(10)
  })
})

describe('PostgresSweepStore: a rate row no write lands on', () => {
  it('a turn whose row a trigger keeps from changing is refused with a coded error naming the rate, not a plain Error', async () => {
    const store = new PostgresSweepStore({ pool: shared, schema })
    const limits = { ceiling: 20, floor: 0.2, raiseEveryMs: 10_000 }
    const table = `"${schema}"."scheduling_kit_subscriptions$sweeps"`
    await shared.query(
      `CREATE FUNCTION "${schema}".keep_stuck() RETURNS trigger LANGUAGE plpgsql AS
       $$ BEGIN IF NEW.name = 'rate:stuck' THEN RETURN NULL; END IF; RETURN NEW; END $$`,
    )
    await shared.query(
      `CREATE TRIGGER keep_stuck BEFORE UPDATE ON ${table}
       FOR EACH ROW EXECUTE FUNCTION "${schema}".keep_stuck()`,
    )
    try {
      const error = await store.reserveTurn('stuck', limits, 1_900_000_000_000).catch((e) => e)
      expect(isSchedulingError(error) && error.code).toBe('store_write_failed')
      expect((error as Error).message).toMatch(/PostgresSweepStore: the rate's row "stuck"/)
      // Another rate's turns are untouched.
      expect((await store.reserveTurn('free', limits, 1_900_000_000_000)).perSecond).toBe(20)
    } finally {
      await shared.query(`DROP TRIGGER keep_stuck ON ${table}`)
      await shared.query(`DROP FUNCTION "${schema}".keep_stuck()`)
    }
  })
})

runLedgerStoreConformance((o) => new PostgresLedgerStore({ pool: shared, schema, ...o }), {
  describe,
  it,
  name: 'PostgresLedgerStore: LedgerStore conformance',
})

runLedgerScenarios(() => new PostgresLedgerStore({ pool: shared, schema }), {
  describe,
  it,
  name: 'PostgresLedgerStore: ledger scenarios',
})

const record = { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 }

describe('PostgresTokenStore', () => {
  it('a write based on a read made before a delete cannot land after it (the version survives the delete)', async () => {
    const store = new PostgresTokenStore({ pool: shared, schema })
    await store.set('aba', record)
    const read = (await store.get('aba'))!
    await store.delete('aba')
    expect(await store.get('aba')).toBeUndefined()
    expect(await store.compareAndSet('aba', { ...record, accessToken: 'new' }, undefined)).toBe(
      true,
    )
    expect(
      await store.compareAndSet('aba', { ...record, accessToken: 'stale' }, read.version),
    ).toBe(false)
    expect((await store.get('aba'))!.accessToken).toBe('new')
  })

  it('compares lease expiry on the database clock, not the app clock', async () => {
    const store = new PostgresTokenStore({ pool: shared, schema })
    expect(await store.acquireLease('clock', 'a', 60_000)).toBe(true)
    const { rows } = await shared.query(
      `SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) * 1000 AS ms FROM "${schema}".scheduling_kit_tokens WHERE key = 'clock'`,
    )
    expect(Number(rows[0].ms)).toBeGreaterThan(55_000)
    expect(Number(rows[0].ms)).toBeLessThanOrEqual(60_000)
  })

  it('prune removes deleted records older than the limit and lease-only rows whose lease expired, nothing else', async () => {
    const store = new PostgresTokenStore({ pool: shared, schema })
    await store.set('prune-live', record)
    await store.set('prune-deleted', record)
    await store.delete('prune-deleted')
    expect(await store.acquireLease('prune-lease', 'a', 60_000)).toBe(true)
    expect(await store.acquireLease('prune-lapsed', 'a', 1)).toBe(true)
    await new Promise((r) => setTimeout(r, 20))
    expect(await store.prune(0)).toBeGreaterThanOrEqual(2)
    const { rows } = await shared.query(
      `SELECT key FROM "${schema}".scheduling_kit_tokens WHERE key LIKE 'prune-%' ORDER BY key`,
    )
    expect(rows.map((r) => r.key)).toEqual(['prune-lease', 'prune-live'])
    expect((await store.get('prune-live'))!.accessToken).toBe('a')
  })
})

describe('PostgresDedupeStore', () => {
  it('prune removes expired rows only', async () => {
    const store = new PostgresDedupeStore({ pool: shared, schema, leaseMs: 1, autoPrune: false })
    await store.claim('pr-lapsed', 'a')
    const lasting = new PostgresDedupeStore({ pool: shared, schema, autoPrune: false })
    await lasting.claim('pr-held', 'b')
    await new Promise((r) => setTimeout(r, 20))
    expect(await store.prune()).toBeGreaterThanOrEqual(1)
    expect(await lasting.claim('pr-held', 'c')).toBe('in_progress')
    expect(await lasting.claim('pr-lapsed', 'c')).toBe('claimed')
  })

  it('expired rows go without prune(): a sweep amortised on claims, in batches, never a live row', async () => {
    const own = await migratedSchema('autoprune', shared)
    const table = `"${own}".scheduling_kit_dedupe`
    const count = async () =>
      Number((await shared.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n)
    const store = new PostgresDedupeStore({
      pool: shared,
      schema: own,
      ttlMs: 1,
      autoPrune: { everyMs: 1, batch: 100 },
    })
    // 1 000 deliveries, each completed with a 1 ms memory: expired at once.
    for (let i = 0; i < 1_000; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          await store.claim(`d${i + j}`, 'w')
          await store.complete(`d${i + j}`, 'w')
        }),
      )
    }
    await store.pruning
    const live = new PostgresDedupeStore({ pool: shared, schema: own, autoPrune: false })
    expect(await live.claim('held', 'x')).toBe('claimed') // lease: 60 s
    await new Promise((r) => setTimeout(r, 5))
    // The next claim starts a sweep; batches of 100 go on while full.
    expect(await store.claim('trigger', 'w')).toBe('claimed')
    await store.pruning
    const left = await count()
    expect(left, `rows left: ${left}`).toBeLessThanOrEqual(2) // 'held', and 'trigger' if alive
    expect(await live.claim('held', 'y')).toBe('in_progress')
    // Off: nothing is deleted without prune().
    const manual = new PostgresDedupeStore({
      pool: shared,
      schema: own,
      ttlMs: 1,
      autoPrune: false,
    })
    for (let i = 0; i < 20; i++) {
      await manual.claim(`m${i}`, 'w')
      await manual.complete(`m${i}`, 'w')
    }
    await new Promise((r) => setTimeout(r, 5))
    await manual.claim('m-trigger', 'w')
    expect(manual.pruning).toBeUndefined()
    expect(await count()).toBeGreaterThanOrEqual(20)
    expect(() => new PostgresDedupeStore({ pool: shared, autoPrune: 5 as never })).toThrow(
      /autoPrune must be false or/,
    )
  })

  it('two instances sweeping the same expired rows at once: no error, no deadlock, all gone', async () => {
    const own = await migratedSchema('autoprune2', shared)
    const writer = new PostgresDedupeStore({
      pool: shared,
      schema: own,
      ttlMs: 1,
      autoPrune: false,
    })
    for (let i = 0; i < 2_000; i += 100)
      await Promise.all(Array.from({ length: 100 }, (_, j) => writer.complete(`x${i + j}`, 'w')))
    await new Promise((r) => setTimeout(r, 5))
    const expired = async () =>
      Number(
        (
          await shared.query(
            `SELECT count(*) AS n FROM "${own}".scheduling_kit_dedupe WHERE key LIKE 'x%'`,
          )
        ).rows[0].n,
      )
    expect(await expired()).toBe(2_000)
    const sweepers = Array.from(
      { length: 4 },
      () => new PostgresDedupeStore({ pool: shared, schema: own, autoPrune: { batch: 300 } }),
    )
    await Promise.all(sweepers.map((s, i) => s.claim(`s${i}`, 'w')))
    await Promise.all(sweepers.map((s) => s.pruning))
    expect(await expired()).toBe(0)
  })

  it('says to run migrate when its table is missing, and refuses unsafe names', async () => {
    const store = new PostgresDedupeStore({ pool: shared, schema, table: 'not_migrated' })
    await expect(store.claim('k', 'o')).rejects.toThrow(
      /does not exist\. Run migrate\(pool\) at start-up/,
    )
    expect(() => new PostgresTokenStore({ pool: shared, table: 'x"; DROP TABLE y; --' })).toThrow(
      /table must be a plain identifier/,
    )
    expect(() => new PostgresTokenStore({} as never)).toThrow(/pass \{ pool \}, a pg Pool/)
  })
})

describe('keys', () => {
  const tricky = ['a\ud800', 'a\udfff', 'a\ufffd', '\uffff', '\uffff0061d800', '\ufffe', '}x']

  it('keys that differ only in lone surrogates (or that look escaped) are distinct records and claims', async () => {
    const tokens = new PostgresTokenStore({ pool: shared, schema })
    const dedupe = new PostgresDedupeStore({ pool: shared, schema })
    const run = Math.random().toString(36).slice(2)
    for (const [i, key] of tricky.entries()) {
      await tokens.set(run + key, { ...record, accessToken: `t${i}` })
      expect(await dedupe.claim(run + key, `o${i}`)).toBe('claimed')
    }
    for (const [i, key] of tricky.entries())
      expect((await tokens.get(run + key))?.accessToken).toBe(`t${i}`)
  })

  it('keys of any length: a 3 008-character payload id and a 1 MB token key', async () => {
    const dedupe = new PostgresDedupeStore({ pool: shared, schema })
    const tokens = new PostgresTokenStore({ pool: shared, schema })
    const id = `evt_${'x'.repeat(3_004)}${Math.random()}`
    expect(await dedupe.claim(id, 'a')).toBe('claimed')
    expect(await dedupe.claim(id, 'b')).toBe('in_progress')
    await dedupe.complete(id, 'a')
    expect(await dedupe.claim(id, 'c')).toBe('completed')
    expect(await dedupe.claim(`${id}y`, 'd')).toBe('claimed')
    const key = `k${'é'.repeat(500_000)}${Math.random()}`
    await tokens.set(key, record)
    expect(await tokens.acquireLease(key, 'me', 5_000)).toBe(true)
    expect((await tokens.get(key))?.accessToken).toBe('a')
    expect(await tokens.get(`${key}!`)).toBeUndefined()
  })
})
