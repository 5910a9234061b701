import { inPhases, PHASES, phaseOf } from '@scheduling-kit/core/store'
import { expect, it } from 'vitest'
import { PostgresSubscriptionStore } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

// The sweep's read by phase (subscriptions@4): a step reads its window's accounts from the index
// by phase; rows written before the column (or by an instance of an earlier version, which
// leaves it empty) are given their phase as the store first reads by phase, and listed.

const db = pool(4)

const record = () => ({
  active: true,
  updatedAt: Date.now(),
  webhooks: [
    {
      id: `wh_${Math.random().toString(36).slice(2)}`,
      secret: 's',
      url: 'https://a.test/h',
      createdAt: 1,
    },
  ],
})

it('rows without a phase are given theirs and listed; a range then reads only its accounts, by the index', async () => {
  const schema = await migratedSchema('sweep_phases', db)
  const store = new PostgresSubscriptionStore({ pool: db, schema })
  const keys = Array.from({ length: 1_200 }, (_, i) => `acct_${i}`)
  for (let i = 0; i < keys.length; i += 100)
    await Promise.all(
      keys.slice(i, i + 100).map((k) => store.compareAndSet(k, record(), undefined)),
    )
  // As an earlier version left them: no phase.
  await db.query(
    `UPDATE ${schema}.scheduling_kit_subscriptions SET sweep_phase = NULL WHERE account < 'acct_6'`,
  )
  const range = { from: PHASES * 0.9, to: PHASES * 0.15 }
  const seen: string[] = []
  for await (const k of store.keys(range)) seen.push(k)
  expect(seen.sort()).toEqual(keys.filter((k) => inPhases(phaseOf(k), range)).sort())
  const { rows } = await db.query(
    `SELECT count(*)::int AS n FROM ${schema}.scheduling_kit_subscriptions WHERE sweep_phase IS NULL`,
  )
  expect(rows[0].n).toBe(0)
  // Each row's phase is its key's.
  const stored = await db.query(
    `SELECT account, sweep_phase FROM ${schema}.scheduling_kit_subscriptions`,
  )
  for (const row of stored.rows) expect(Number(row.sweep_phase)).toBe(phaseOf(row.account))
  // The read by phase uses the index: no scan of the table.
  const plan = await db.query(
    `EXPLAIN SELECT key, account FROM ${schema}.scheduling_kit_subscriptions
     WHERE record IS NOT NULL AND sweep_phase >= 0 AND sweep_phase < 1000 AND (sweep_phase, key) > (-1, '')
     ORDER BY sweep_phase, key LIMIT 500`,
  )
  expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/by_phase/)
})
