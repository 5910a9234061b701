import { createHash } from 'node:crypto'
import {
  ConfigError,
  type CredentialCipher,
  type CredentialError,
  isSchedulingError,
  type ReencryptResult,
  StoreNotMigratedError,
} from '@scheduling-kit/core'
import { decodeStoreKey, encodeStoreKey, type RecordSealer } from '@scheduling-kit/core/store'
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

/** The key a row key stands for; `undefined` when the row keeps only its hash (over 1 KiB). */
export function keyOfRow(stored: string): string | undefined {
  return stored.startsWith(HASHED_KEY_MARK) ? undefined : decodeStoreKey(stored)
}

/** The user's `pg` Pool (or anything with its `query` and `connect`). */
export type PostgresPool = Pick<Pool, 'query' | 'connect'>

export const DEFAULT_SCHEMA = 'public'
export const DEFAULT_TOKEN_TABLE = 'scheduling_kit_tokens'
export const DEFAULT_DEDUPE_TABLE = 'scheduling_kit_dedupe'
export const DEFAULT_SUBSCRIPTION_TABLE = 'scheduling_kit_subscriptions'
export const DEFAULT_LEDGER_TABLE = 'scheduling_kit_ledger'
export const MIGRATIONS_TABLE = 'scheduling_kit_migrations'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/

/** A checked identifier, quoted: names come from options, never from requests, but still. */
export function identifier(who: string, what: string, name: string): string {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new ConfigError(
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

export interface SealedStoreOptions extends PostgresStoreOptions {
  /**
   * Seals every record (`createCredentialCipher`): the `record` column holds a sealed string
   * bound to the row's key instead of JSON with tokens or secrets in it. Rows stored before
   * are read, and sealed on their next write or by `reencrypt()`.
   */
  cipher?: CredentialCipher
}

/** A record as the jsonb `record` parameter: its JSON, or its sealed string as a JSON string. */
export async function recordParam<T>(
  sealer: RecordSealer<T>,
  key: string,
  record: T,
): Promise<string> {
  const stored = await sealer.write(key, record)
  return sealer.sealing ? JSON.stringify(stored) : stored
}

/** Rows a sweep reads at a time. */
export const PAGE = 500

/**
 * `reencrypt()` of a table of sealed records: page by page in key order, each record not
 * sealed with the current key is opened and sealed again, in place and with its version
 * kept, unless a write changed the row meanwhile (its version moved).
 */
export async function reencryptRows<T>(
  query: <Row>(text: string, values: unknown[]) => Promise<{ rows: Row[]; rowCount: number }>,
  table: string,
  sealer: RecordSealer<T>,
  keyOf: (row: { key: string; account?: string }) => string | undefined,
  withAccount: boolean,
): Promise<ReencryptResult> {
  const result: ReencryptResult = { scanned: 0, rewritten: 0, skipped: 0, failed: [] }
  if (!sealer.sealing) return result
  let after = ''
  for (;;) {
    const { rows } = await query<{
      key: string
      account?: string
      record: unknown
      version: number
    }>(
      `SELECT key, ${withAccount ? 'account, ' : ''}record, version FROM ${table}
       WHERE key > $1 AND record IS NOT NULL ORDER BY key LIMIT ${PAGE}`,
      [after],
    )
    for (const row of rows) {
      result.scanned++
      if (!sealer.stale(row.record)) continue
      const key = keyOf(row)
      if (key === undefined) {
        result.skipped++
        continue
      }
      let param: string
      try {
        param = await recordParam(sealer, key, await sealer.read(key, row.record))
      } catch (error) {
        if (!isSchedulingError(error) || !error.code.startsWith('credential_')) throw error
        result.failed.push(error as CredentialError)
        continue
      }
      const { rowCount } = await query(
        `UPDATE ${table} SET record = $2::jsonb
         WHERE key = $1 AND version = $3 AND record IS NOT NULL`,
        [row.key, param, row.version],
      )
      if (rowCount === 1) result.rewritten++
      else result.skipped++
    }
    if (rows.length < PAGE) return result
    after = rows.at(-1)!.key
  }
}

/** The schema-qualified, quoted table a store uses, checked once. */
export function tableOf(who: string, options: PostgresStoreOptions, fallback: string): string {
  if (typeof options?.pool?.query !== 'function') {
    throw new ConfigError(`${who}: pass { pool }, a pg Pool (new pg.Pool({ connectionString })).`)
  }
  const schema = identifier(who, 'schema', options.schema ?? DEFAULT_SCHEMA)
  return `${schema}.${identifier(who, 'table', options.table ?? fallback)}`
}

/**
 * The subscription table's index from each webhook id to its row (`<table>$by_webhook`, beside
 * the table): a delivery's lookup is one primary-key probe, whatever the number of accounts.
 */
export function webhookIndexName(table: string): string {
  return `"${table.slice(0, 50)}$by_webhook"`
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
      throw new StoreNotMigratedError(who, table, { cause: error })
    }
    throw error
  }
}

/** `$n` milliseconds after now on the database's clock: every expiry is on one clock. */
export const msFromNow = (n: number) => `clock_timestamp() + $${n} * interval '1 millisecond'`

/** The ledger's resource marks, beside its table: `<table>$marks`. */
export function marksTableName(table: string): string {
  return `"${table.slice(0, 50)}$marks"`
}

/**
 * The function that writes an entry's first version keeping its body within the account's
 * bound, one account at a time: `"<ledger table>$first"`, quoted.
 */
export function firstWriteName(table: string): string {
  return `"${table.slice(0, 50)}$first"`
}

/** The table of a ledger's resource holds: `"<ledger table>$holds"`, quoted. */
export function holdsTableName(table: string): string {
  return `"${table.slice(0, 50)}$holds"`
}

/** The table of a sweep's shards (leases and checkpoints), beside the subscriptions': `"<table>$sweeps"`. */
export function sweepsTableName(table: string): string {
  return `"${table.slice(0, 50)}$sweeps"`
}

/** The held tries of failed work beside a subscriptions table (`subscriptions@6`), quoted. */
export function retriesTableName(table: string): string {
  return `"${table.slice(0, 50)}$retries"`
}

/** What a table holds. */
export type TableKind = 'tokens' | 'dedupe' | 'subscriptions' | 'ledger'

export interface Migration {
  kind: TableKind
  version: number
  sql(table: string, name: string, schema: string): string
}
