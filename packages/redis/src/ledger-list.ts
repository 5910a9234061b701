import type { LedgerFilter, LedgerPage, StoredLedgerEntry } from '@scheduling-kit/core'
import { ledgerPageSize, ledgerTimeOf, readLedgerCursor } from '@scheduling-kit/core/store'
import type { LedgerKeys, LedgerShard } from './ledger-keys.js'
import list from './lua/ledger/list.lua'
import { type RedisClient, script } from './scripts.js'

// Listing a Redis ledger: newest first from an index, one script call a page and shard (list.lua
// walks at most 2 000 index entries a call; a page that walked that far without filling
// continues after the last one it walked). An account's entries are in one shard; a listing of
// every account asks each shard for a page and merges them (`mergePages`).

const LIST = script(list)

/** A matching entry as list.lua answers it: its hash's fields, then its score and id. */
type Row = [v: string, e: string, b: string, x: string, c: string, score: string, id: string]

/** One shard's answer: its matches, whether it has more, the last index entry it walked. */
export interface ShardPage {
  rows: Row[]
  more: boolean
  lastScore: string
  lastId: string
}

/** A position in the newest-first order: by first recording, then id (as Redis orders bytes). */
interface Position {
  score: number
  id: string
}

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
  const args = [
    cursor === undefined ? '' : cursor.at,
    cursor === undefined ? '' : cursor.id,
    since === undefined ? '-inf' : since,
    until === undefined ? '' : until,
    limit,
    statuses.join(','),
    filter.status !== undefined && statuses.length === 0 ? '1' : '0',
    filter.type ?? '',
  ]
  const pageOf = async (shard: LedgerShard, index: string): Promise<ShardPage> => {
    const answer = await LIST(client, [index], [shard.entry(''), ...args])
    const [rows, more, lastScore, lastId] = answer as [Row[], number, string, string]
    return { rows, more: Number(more) === 1, lastScore, lastId }
  }
  const account = filter.account
  const pages =
    account === undefined
      ? await Promise.all(keys.shards.map((shard) => pageOf(shard, shard.byTime)))
      : [await pageOf(keys.ofAccount(account), keys.ofAccount(account).account(account))]
  const { rows, next } = mergePages(pages, limit)
  const page: LedgerPage = { entries: rows.map(([v, e, b, x, c]) => assemble(v, e, b, x, c)) }
  if (next !== undefined) page.next = `${next.score}.${next.id}`
  return page
}

/**
 * Shards' pages merged into one, newest first: what every shard has read through (the newest of
 * the places a shard stopped short) bounds it, so no entry of another shard is passed over; the
 * next page starts after its last entry, or after that bound when it is short.
 */
export function mergePages(
  pages: readonly ShardPage[],
  limit: number,
): {
  rows: Row[]
  next: Position | undefined
} {
  let bound: Position | undefined
  for (const { rows, more, lastScore, lastId } of pages) {
    if (!more) continue
    const last = rows.length === limit ? positionOf(rows[rows.length - 1]!) : undefined
    const stop = last ?? { score: Number(lastScore), id: lastId }
    if (bound === undefined || newer(stop, bound)) bound = stop
  }
  const merged = pages.length === 1 ? pages[0]!.rows : pages.flatMap((p) => p.rows).sort(byNewest)
  const rows: Row[] = []
  for (const row of merged) {
    if (rows.length === limit) break
    if (bound !== undefined && newer(bound, positionOf(row))) break
    rows.push(row)
  }
  if (rows.length === limit && (bound !== undefined || merged.length > limit))
    return { rows, next: positionOf(rows[rows.length - 1]!) }
  return { rows, next: bound }
}

const positionOf = (row: Row): Position => ({ score: Number(row[5]), id: row[6] })

/** Whether `a` comes before `b` newest first: a later score, or the same and a greater id. */
function newer(a: Position, b: Position): boolean {
  return a.score !== b.score ? a.score > b.score : Buffer.compare(bytes(a.id), bytes(b.id)) > 0
}

const bytes = (id: string) => Buffer.from(id, 'utf8')

const byNewest = (a: Row, b: Row) => {
  const x = positionOf(a)
  const y = positionOf(b)
  return newer(x, y) ? -1 : newer(y, x) ? 1 : 0
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
