import { createHash } from 'node:crypto'
import { encodeStoreKey } from '@scheduling-kit/core/adapter'
import type { Pool } from 'pg'

/** Longest key kept as it is, in UTF-8 bytes: a btree index row holds at most about 2 700. */
const MAX_KEY_BYTES = 1_024

/** Marks a key kept as its SHA-256: U+FFFE, never the first character of another stored key. */
const HASHED_KEY_MARK = '\ufffe'

/**
 * A key as the tables hold it: lossless (`encodeStoreKey`: no two keys become one through
 * UTF-8), and past 1 024 bytes its SHA-256 instead, so a key of any length fits the index.
 */
export function rowKey(key: string): string {
  const encoded = encodeStoreKey(key, (k) => k.startsWith(HASHED_KEY_MARK))
  if (Buffer.byteLength(encoded) <= MAX_KEY_BYTES) return encoded
  return HASHED_KEY_MARK + createHash('sha256').update(encoded).digest('hex')
}

/** The user's `pg` Pool (or anything with its `query` and `connect`). */
export type PostgresPool = Pick<Pool, 'query' | 'connect'>

export const DEFAULT_SCHEMA = 'public'
export const DEFAULT_TOKEN_TABLE = 'scheduling_kit_tokens'
export const DEFAULT_DEDUPE_TABLE = 'scheduling_kit_dedupe'
export const DEFAULT_SUBSCRIPTION_TABLE = 'scheduling_kit_subscriptions'
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
  /** Table name. Defaults: `scheduling_kit_tokens`, `scheduling_kit_dedupe`, `scheduling_kit_subscriptions`. */
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
