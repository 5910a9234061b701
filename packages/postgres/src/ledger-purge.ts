import type { LedgerPurge, LedgerPurged } from '@scheduling-kit/core'
import type { LedgerQuery } from './ledger-list.js'
import { rowKey } from './sql.js'

// Retention of a PostgreSQL ledger: marks past their horizon deleted, entries past the entry
// retention deleted, bodies past theirs (or all of an account's) set to NULL, each entry's
// version moved on so a writer that read it before finds the version changed.

/** Drops what `what` says is over from the entries' and the marks' tables. */
export async function purgeLedger(
  query: LedgerQuery,
  tables: { entries: string; marks: string },
  what: LedgerPurge,
): Promise<LedgerPurged> {
  let entries = 0
  let bodies = 0
  let marks = 0
  if (what.marksBefore !== undefined) {
    marks = (await query(`DELETE FROM ${tables.marks} WHERE horizon < $1`, [what.marksBefore]))
      .rowCount
  }
  const drop = `SET body = NULL, body_expires_at = NULL, version = version + 1`
  if (what.entriesBefore !== undefined) {
    entries = (
      await query(`DELETE FROM ${tables.entries} WHERE received_at < $1`, [what.entriesBefore])
    ).rowCount
  }
  if (what.bodiesBefore !== undefined) {
    bodies += (
      await query(`UPDATE ${tables.entries} ${drop} WHERE body_expires_at <= $1`, [
        what.bodiesBefore,
      ])
    ).rowCount
  }
  if (what.account !== undefined) {
    bodies += (
      await query(`UPDATE ${tables.entries} ${drop} WHERE account = $1 AND body IS NOT NULL`, [
        rowKey(what.account),
      ])
    ).rowCount
  }
  return { bodies, entries, marks }
}
