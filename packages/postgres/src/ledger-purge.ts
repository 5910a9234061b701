import type { LedgerPurge, LedgerPurged } from '@scheduling-kit/core'
import type { LedgerQuery } from './ledger-list.js'
import { rowKey } from './sql.js'

// Retention of a PostgreSQL ledger: marks past their horizon deleted, entries past the entry
// retention deleted, bodies past theirs (or all of an account's) set to NULL, each entry's
// version moved on so a writer that read it before finds the version changed. Each runs in
// batches: one short statement finds up to a batch of rows on an index, locks them and deletes
// or updates them by their place (`ctid`: locked, so no write moves them in between), skipping
// rows a write holds (`SKIP LOCKED`; the next purge takes them). A purge at a million entries
// never holds a long lock or writes one burst of dead rows, and two instances purging at once
// share the work.
// An account's bodies are the exception: an erasure waits for a write under way, never skips it.

/** Rows one statement of a purge deletes or updates, by default. */
export const PURGE_BATCH = 2_000

/** Drops what `what` says is over from the entries' and the marks' tables. */
export async function purgeLedger(
  query: LedgerQuery,
  tables: { entries: string; marks: string },
  what: LedgerPurge,
  batch = PURGE_BATCH,
): Promise<LedgerPurged> {
  const { entries: t, marks: m } = tables
  const drop = `SET body = NULL, body_expires_at = NULL, version = version + 1`
  const inBatches = async (text: string, value: unknown) => {
    let done = 0
    for (;;) {
      const { rowCount } = await query(text, [value, batch])
      done += rowCount
      if (rowCount < batch) return done
    }
  }
  /** Rows of `table` whose `column` is before the time, deleted a batch at a time. */
  const deleteBefore = (table: string, column: string, before: number | undefined) =>
    before === undefined
      ? 0
      : inBatches(
          `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table}
             WHERE ${column} < $1 ORDER BY ${column} LIMIT $2 FOR UPDATE SKIP LOCKED))`,
          before,
        )
  const marks = await deleteBefore(m, 'horizon', what.marksBefore)
  const entries = await deleteBefore(t, 'received_at', what.entriesBefore)
  let bodies = 0
  if (what.bodiesBefore !== undefined)
    bodies += await inBatches(
      `UPDATE ${t} ${drop} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t}
         WHERE body_expires_at <= $1 ORDER BY body_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED))`,
      what.bodiesBefore,
    )
  if (what.account !== undefined)
    bodies += await inBatches(
      `UPDATE ${t} ${drop} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${t}
         WHERE account = $1 AND body IS NOT NULL LIMIT $2 FOR UPDATE))`,
      rowKey(what.account),
    )
  return { bodies, entries, marks }
}
