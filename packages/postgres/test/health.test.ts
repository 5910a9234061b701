import { createServer } from 'node:net'
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import {
  migrate,
  PostgresDedupeStore,
  PostgresSubscriptionStore,
  PostgresTokenStore,
} from '../src/index.js'
import { migratedSchema, pool, uniqueSchema } from './helpers.js'

describe('health()', () => {
  it('ok when the database answers and the table has every migration', async () => {
    const db = pool()
    const schema = await migratedSchema('health_ok', db)
    const stores = {
      scheduling_kit_tokens: new PostgresTokenStore({ pool: db, schema }),
      scheduling_kit_dedupe: new PostgresDedupeStore({ pool: db, schema }),
      scheduling_kit_subscriptions: new PostgresSubscriptionStore({ pool: db, schema }),
    }
    for (const [table, store] of Object.entries(stores)) {
      const report = await store.health()
      expect(report.ok).toBe(true)
      expect(report.checks.map((c) => [c.name, c.ok, c.detail])).toEqual([
        ['postgres', true, undefined],
        [
          'postgres.migrations',
          true,
          expect.stringMatching(new RegExp(`^${schema}\\.${table} at migration \\d+$`)),
        ],
      ])
    }
  })

  it('a table never migrated, or missing its newest migration, is not ready and says to run migrate', async () => {
    const db = pool()
    const bare = uniqueSchema('health_bare')
    await db.query(`CREATE SCHEMA ${bare}`)
    const never = await new PostgresTokenStore({ pool: db, schema: bare }).health()
    expect(never.ok).toBe(false)
    expect(never.checks[1]).toMatchObject({
      name: 'postgres.migrations',
      ok: false,
      detail: `${bare}.scheduling_kit_tokens is not migrated: run migrate(pool).`,
    })
    // The dedupe table's second migration undone in the log: one behind.
    const schema = await migratedSchema('health_behind', db)
    await db.query(
      `DELETE FROM ${schema}.scheduling_kit_migrations WHERE table_name = 'scheduling_kit_dedupe' AND version = 2`,
    )
    const behind = await new PostgresDedupeStore({ pool: db, schema }).health()
    expect(behind.checks[1]!.detail).toBe(
      `${schema}.scheduling_kit_dedupe is at migration 1 of 2: run migrate(pool).`,
    )
    await migrate(db, { schema })
    expect((await new PostgresDedupeStore({ pool: db, schema }).health()).ok).toBe(true)
  })

  it('a database that cannot be reached: not ready, with the driver’s code, not its message', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as { port: number }
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const unreachable = new pg.Pool({
      connectionString: `postgres://postgres:hunter2@127.0.0.1:${port}/test`,
    })
    try {
      const report = await new PostgresTokenStore({ pool: unreachable }).health()
      expect(report).toEqual({
        ok: false,
        checks: [{ name: 'postgres', ok: false, ms: expect.any(Number), detail: 'ECONNREFUSED' }],
      })
    } finally {
      await unreachable.end()
    }
  })
})
