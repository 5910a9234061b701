import type { LedgerFilter, LedgerPage, StoredLedgerEntry } from '@scheduling-kit/core'
import { ledgerPageSize, ledgerTimeOf, readLedgerCursor } from '@scheduling-kit/core/store'
import { rowKey } from './sql.js'

// Reading a PostgreSQL ledger: an entry's row, and keyset pages newest first on
// (received_at, id), ids compared by their bytes (COLLATE "C").

/** A statement against the ledger's table, through the store's error handling. */
export type LedgerQuery = <Row>(
  text: string,
  values: unknown[],
) => Promise<{ rows: Row[]; rowCount: number }>

/** An entry's columns. */
export interface EntryRow {
  version: number
  entry: string
  body: string | null
  body_expires_at: string | null
  body_capped: boolean
}

/** Entries of `table` matching `filter`, newest first, one page at a time. */
export async function listLedger(
  query: LedgerQuery,
  table: string,
  filter: LedgerFilter = {},
): Promise<LedgerPage> {
  const limit = ledgerPageSize(filter)
  const where: string[] = []
  const values: unknown[] = []
  const add = (sql: (n: number) => string, value: unknown) => {
    values.push(value)
    where.push(sql(values.length))
  }
  if (filter.status !== undefined) {
    add(
      (n) => `status = ANY($${n})`,
      typeof filter.status === 'string' ? [filter.status] : [...filter.status],
    )
  }
  if (filter.type !== undefined) add((n) => `type = $${n}`, filter.type)
  if (filter.account !== undefined) add((n) => `account = $${n}`, rowKey(filter.account))
  const since = ledgerTimeOf(filter.since)
  const until = ledgerTimeOf(filter.until)
  if (since !== undefined) add((n) => `received_at >= $${n}`, since)
  if (until !== undefined) add((n) => `received_at < $${n}`, until)
  const cursor = readLedgerCursor(filter.after)
  if (cursor !== undefined) {
    values.push(cursor.at, cursor.id)
    // COLLATE "C": ids compare by their bytes, as every page's order does.
    where.push(
      `(received_at, id COLLATE "C") < ($${values.length - 1}, $${values.length} COLLATE "C")`,
    )
  }
  values.push(limit + 1)
  const { rows } = await query<EntryRow>(
    `SELECT version, entry, body, body_expires_at, body_capped FROM ${table}
       ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
       ORDER BY received_at DESC, id COLLATE "C" DESC LIMIT $${values.length}`,
    values,
  )
  const entries = rows.slice(0, limit).map(assemble)
  const page: LedgerPage = { entries }
  if (rows.length > limit) {
    const last = entries[entries.length - 1]!
    page.next = `${last.receivedAt}.${rowKey(last.id)}`
  }
  return page
}

/** An entry from its row. */
export function assemble(row: EntryRow): StoredLedgerEntry {
  const entry = JSON.parse(row.entry) as StoredLedgerEntry
  entry.version = Number(row.version)
  if (row.body_capped) entry.bodyCapped = true
  if (row.body !== null) {
    entry.body = row.body
    entry.bodyExpiresAt = Number(row.body_expires_at)
  }
  return entry
}
