import type { Pool } from 'pg'

/** The user's `pg` Pool (or anything with its `query` and `connect`). */
export type PostgresPool = Pick<Pool, 'query' | 'connect'>

export const DEFAULT_SCHEMA = 'public'
export const DEFAULT_TOKEN_TABLE = 'scheduling_kit_tokens'
export const DEFAULT_DEDUPE_TABLE = 'scheduling_kit_dedupe'
export const MIGRATIONS_TABLE = 'scheduling_kit_migrations'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/** A checked identifier, quoted: names come from options, never from requests, but still. */
export function identifier(who: string, what: string, name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new TypeError(
      `${who}: ${what} must be a plain identifier (letters, digits, _; at most 63), got ${JSON.stringify(name)}.`,
    )
  }
  return `"${name}"`
}

export interface PostgresStoreOptions {
  /** Your `pg` Pool (`new pg.Pool({ connectionString })`). */
  pool: PostgresPool
  /** Schema of the table. Default `public`. */
  schema?: string
  /** Table name. Defaults: `scheduling_kit_tokens`, `scheduling_kit_dedupe`. */
  table?: string
}

/** The schema-qualified, quoted table a store uses, checked once. */
export function tableOf(who: string, options: PostgresStoreOptions, fallback: string): string {
  if (typeof options?.pool?.query !== 'function') {
    throw new TypeError(`${who}: pass { pool }, a pg Pool (new pg.Pool({ connectionString })).`)
  }
  const schema = identifier(who, 'schema', options.schema ?? DEFAULT_SCHEMA)
  return `${schema}.${identifier(who, 'table', options.table ?? fallback)}`
}

/** Runs a statement; a missing table becomes an error that says to run `migrate`. */
export async function run<Row>(
  pool: PostgresPool,
  who: string,
  table: string,
  text: string,
  values: unknown[],
): Promise<{ rows: Row[]; rowCount: number }> {
  try {
    const result = await pool.query(text, values)
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 }
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') {
      throw new Error(
        `${who}: table ${table} does not exist. Run migrate(pool) at start-up (with the same schema and table names).`,
        { cause: error },
      )
    }
    throw error
  }
}

/** `$n` milliseconds after now on the database's clock: every expiry is on one clock. */
export const msFromNow = (n: number) => `clock_timestamp() + $${n} * interval '1 millisecond'`
