import type { LedgerFilter, LedgerPage, StoredLedgerEntry } from '@scheduling-kit/core'
import { ledgerPageSize, ledgerTimeOf, readLedgerCursor } from '@scheduling-kit/core/store'
import type { LedgerKeys } from './ledger-keys.js'
import list from './lua/ledger/list.lua'
import { type RedisClient, script } from './scripts.js'

// Listing a Redis ledger: newest first from an index, one script call a page (list.lua walks
// at most 2 000 index entries a call; a page that walked that far without filling continues
// after the last one it walked).

const LIST = script(list)

/** Entries matching `filter`, newest first, one page at a time. */
export async function listLedger(
  client: RedisClient,
  keys: LedgerKeys,
  filter: LedgerFilter = {},
): Promise<LedgerPage> {
  const limit = ledgerPageSize(filter)
  const cursor = readLedgerCursor(filter.after)
  const statuses =
    filter.status === undefined
      ? []
      : typeof filter.status === 'string'
        ? [filter.status]
        : [...filter.status]
  const since = ledgerTimeOf(filter.since)
  const until = ledgerTimeOf(filter.until)
  const index = filter.account === undefined ? keys.byTime : keys.account(filter.account)
  const [rows, more, lastScore, lastId] = (await LIST(
    client,
    [index],
    [
      keys.entry(''),
      cursor === undefined ? '' : cursor.at,
      cursor === undefined ? '' : cursor.id,
      since === undefined ? '-inf' : since,
      until === undefined ? '' : until,
      limit,
      statuses.join(','),
      filter.status !== undefined && statuses.length === 0 ? '1' : '0',
      filter.type ?? '',
    ],
  )) as [[string, string, string, string, string][], number, string, string]
  const entries = rows.map(([v, e, b, x, c]) => assemble(v, e, b, x, c))
  const page: LedgerPage = { entries }
  if (Number(more) === 1) {
    // A full page continues after its last entry; a short one after the last it walked.
    const last = entries.length === limit ? entries[entries.length - 1]! : undefined
    page.next = last === undefined ? `${lastScore}.${lastId}` : `${last.receivedAt}.${last.id}`
  }
  return page
}

/** An entry from its hash's fields (`v`, `e`, `b`, `x`, `c`). */
export function assemble(v: string, e: string, b: string, x: string, c: string): StoredLedgerEntry {
  const entry = JSON.parse(e) as StoredLedgerEntry
  entry.version = Number(v)
  if (c === '1') entry.bodyCapped = true
  if (b !== '') {
    entry.body = b
    entry.bodyExpiresAt = Number(x)
  }
  return entry
}
