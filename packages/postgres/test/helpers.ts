import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll } from 'vitest'
import { migrate } from '../src/index.js'

/** The database the tests use: DATABASE_URL (scripts/test.mjs sets it when it starts its own), else the local one. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const pools: pg.Pool[] = []
const schemas: string[] = []
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
})

/** A pool closed after the file's tests. */
export function pool(max = 10): pg.Pool {
  const created = new pg.Pool({ connectionString: DATABASE_URL, max })
  pools.push(created)
  return created
}

/** A schema of its own, dropped after the file's tests. */
export function uniqueSchema(name: string): string {
  const schema = `sk_test_${name}_${randomBytes(4).toString('hex')}`
  schemas.push(schema)
  return schema
}

/** A fresh schema with the tables migrated into it. */
export async function migratedSchema(name: string, into = pool()): Promise<string> {
  const schema = uniqueSchema(name)
  await migrate(into, { schema })
  return schema
}
