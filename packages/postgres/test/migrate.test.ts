import { spawn } from 'node:child_process'
import { expect, it } from 'vitest'
import { migrate, PostgresTokenStore } from '../src/index.js'
import { DATABASE_URL, pool, uniqueSchema } from './helpers.js'

it('applies each version once; a second run applies nothing', async () => {
  const p = pool()
  const schema = uniqueSchema('once')
  expect((await migrate(p, { schema })).applied).toEqual([
    'scheduling_kit_tokens@1',
    'scheduling_kit_dedupe@1',
    'scheduling_kit_dedupe@2',
    'scheduling_kit_subscriptions@1',
    'scheduling_kit_subscriptions@2',
    'scheduling_kit_ledger@1',
    'scheduling_kit_ledger@2',
    'scheduling_kit_ledger@3',
    'scheduling_kit_ledger@4',
    'scheduling_kit_subscriptions@3',
    'scheduling_kit_subscriptions@4',
    'scheduling_kit_subscriptions@5',
    'scheduling_kit_subscriptions@6',
  ])
  expect((await migrate(p, { schema })).applied).toEqual([])
  expect(
    (
      await migrate(p, {
        schema,
        tokenTable: 'other_tokens',
        dedupeTable: 'other_dedupe',
        subscriptionTable: 'other_subs',
        ledgerTable: 'other_ledger',
      })
    ).applied,
  ).toEqual([
    'other_tokens@1',
    'other_dedupe@1',
    'other_dedupe@2',
    'other_subs@1',
    'other_subs@2',
    'other_ledger@1',
    'other_ledger@2',
    'other_ledger@3',
    'other_ledger@4',
    'other_subs@3',
    'other_subs@4',
    'other_subs@5',
    'other_subs@6',
  ])
  const store = new PostgresTokenStore({ pool: p, schema, table: 'other_tokens' })
  await store.set('k', { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 })
  expect((await store.get('k'))!.version).toBe(1)
})

it('8 OS processes migrating one new schema at once: all succeed, each version applied once', async () => {
  const schema = uniqueSchema('many')
  const startAt = String(Date.now() + 1_500) // all at once, as instances behind a deploy
  const script = `
    import pg from 'pg'
    import { migrate } from './dist/index.js'
    const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
    await (await pool.connect()).release() // connected before the start line
    await new Promise((r) => setTimeout(r, Math.max(0, Number(process.env.START_AT) - Date.now())))
    const { applied } = await migrate(pool, { schema: process.env.SCHEMA })
    console.log(JSON.stringify(applied))
    await pool.end()`
  const runs = Array.from(
    { length: 8 },
    () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
          cwd: new URL('..', import.meta.url),
          env: { ...process.env, DATABASE_URL, SCHEMA: schema, START_AT: startAt },
        })
        let out = ''
        let err = ''
        child.stdout.on('data', (d) => (out += d))
        child.stderr.on('data', (d) => (err += d))
        child.on('exit', (code) => resolve({ code, out, err }))
      }),
  )
  const results = await Promise.all(runs)
  expect(results.map((r) => [r.code, r.err])).toEqual(Array(8).fill([0, '']))
  const applied = results.flatMap((r) => JSON.parse(r.out) as string[])
  expect(applied.sort()).toEqual([
    'scheduling_kit_dedupe@1',
    'scheduling_kit_dedupe@2',
    'scheduling_kit_ledger@1',
    'scheduling_kit_ledger@2',
    'scheduling_kit_ledger@3',
    'scheduling_kit_ledger@4',
    'scheduling_kit_subscriptions@1',
    'scheduling_kit_subscriptions@2',
    'scheduling_kit_subscriptions@3',
    'scheduling_kit_subscriptions@4',
    'scheduling_kit_subscriptions@5',
    'scheduling_kit_subscriptions@6',
    'scheduling_kit_tokens@1',
  ])
  const { rows } = await pool().query(
    `SELECT count(*)::int AS n FROM "${schema}".scheduling_kit_migrations`,
  )
  expect(rows[0].n).toBe(13)
})

it('refuses an unsafe schema name and one table for both', async () => {
  await expect(migrate(pool(), { schema: 'a b' })).rejects.toThrow(
    /schema must be a plain identifier/,
  )
  await expect(migrate(pool(), { tokenTable: 't', dedupeTable: 't' })).rejects.toThrow(
    /must be four different/,
  )
})

it('index names cannot clash with a table: a token table named like the dedupe index of old', async () => {
  const p = pool()
  const schema = uniqueSchema('clash')
  const { applied } = await migrate(p, { schema, dedupeTable: 'd', tokenTable: 'd_expires' })
  expect(applied).toEqual([
    'd_expires@1',
    'd@1',
    'd@2',
    'scheduling_kit_subscriptions@1',
    'scheduling_kit_subscriptions@2',
    'scheduling_kit_ledger@1',
    'scheduling_kit_ledger@2',
    'scheduling_kit_ledger@3',
    'scheduling_kit_ledger@4',
    'scheduling_kit_subscriptions@3',
    'scheduling_kit_subscriptions@4',
    'scheduling_kit_subscriptions@5',
    'scheduling_kit_subscriptions@6',
  ])
  const store = new PostgresTokenStore({ pool: p, schema, table: 'd_expires' })
  await store.set('k', { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 })
  expect((await store.get('k'))?.accessToken).toBe('a')
})

it('a database migrated with the old index name gets it renamed (dedupe@2)', async () => {
  const p = pool()
  const schema = uniqueSchema('rename')
  // What dedupe@1 used to create, recorded as applied.
  await p.query(`CREATE SCHEMA "${schema}"`)
  await p.query(`CREATE TABLE "${schema}".scheduling_kit_migrations (
    table_name text NOT NULL, version integer NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (table_name, version))`)
  await p.query(`CREATE TABLE "${schema}".scheduling_kit_dedupe (key text PRIMARY KEY,
    owner text NOT NULL, state text NOT NULL, expires_at timestamptz NOT NULL)`)
  await p.query(
    `CREATE INDEX scheduling_kit_dedupe_expires ON "${schema}".scheduling_kit_dedupe (expires_at)`,
  )
  await p.query(
    `INSERT INTO "${schema}".scheduling_kit_migrations VALUES ('scheduling_kit_dedupe', 1)`,
  )
  expect((await migrate(p, { schema })).applied).toEqual([
    'scheduling_kit_tokens@1',
    'scheduling_kit_dedupe@2',
    'scheduling_kit_subscriptions@1',
    'scheduling_kit_subscriptions@2',
    'scheduling_kit_ledger@1',
    'scheduling_kit_ledger@2',
    'scheduling_kit_ledger@3',
    'scheduling_kit_ledger@4',
    'scheduling_kit_subscriptions@3',
    'scheduling_kit_subscriptions@4',
    'scheduling_kit_subscriptions@5',
    'scheduling_kit_subscriptions@6',
  ])
  const { rows } = await p.query(
    'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY 1',
    [schema, 'scheduling_kit_dedupe'],
  )
  expect(rows.map((r) => r.indexname)).toEqual([
    'scheduling_kit_dedupe$expires',
    'scheduling_kit_dedupe_pkey',
  ])
})

it('works for a role that owns its schema but may not create schemas in the database', async () => {
  const admin = pool()
  const role = uniqueSchema('owner')
  await admin.query(`CREATE ROLE "${role}" LOGIN`)
  await admin.query(`CREATE SCHEMA "${role}" AUTHORIZATION "${role}"`)
  const url = new URL(DATABASE_URL)
  url.username = role
  const owner = new (await import('pg')).default.Pool({ connectionString: url.toString(), max: 1 })
  try {
    await expect(owner.query(`CREATE SCHEMA IF NOT EXISTS "${role}"`)).rejects.toThrow(
      /permission denied/,
    )
    const { applied } = await migrate(owner, { schema: role })
    expect(applied).toHaveLength(13)
    const store = new PostgresTokenStore({ pool: owner, schema: role })
    await store.set('k', { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 })
    expect((await store.get('k'))?.accessToken).toBe('a')
  } finally {
    await owner.end()
    await admin.query(`DROP SCHEMA "${role}" CASCADE`)
    await admin.query(`DROP ROLE "${role}"`)
  }
})
