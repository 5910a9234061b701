import type { ResourceMark, StoredResourceMark } from '@scheduling-kit/core'
import { markHorizonOf } from '@scheduling-kit/core/store'
import type { LedgerQuery } from './ledger-list.js'
import { rowKey } from './sql.js'

// A PostgreSQL ledger's resource marks (what was last applied to each Event: `<table>$marks`)
// and holds (one runner of a resource at a time: `<table>$holds`).

/**
 * A mark's columns: resource, JSON, time, rank, delivery, horizon. The resource and the
 * delivery as row keys (`rowKey`): two that differ only in a lone surrogate stay two.
 */
export function markValues(mark: ResourceMark): unknown[] {
  return [
    rowKey(mark.resourceId),
    JSON.stringify(mark),
    mark.at,
    mark.rank,
    rowKey(mark.by),
    markHorizonOf(mark),
  ]
}

/** A resource's mark in `table`, with its version. */
export async function readMark(
  query: LedgerQuery,
  table: string,
  resourceId: string,
): Promise<StoredResourceMark | undefined> {
  const { rows } = await query<{ version: number; mark: string }>(
    `SELECT version, mark FROM ${table} WHERE resource_id = $1`,
    [rowKey(resourceId)],
  )
  const row = rows[0]
  return row === undefined
    ? undefined
    : { ...(JSON.parse(row.mark) as ResourceMark), version: Number(row.version) }
}

/** Writes a mark by compare-and-set on its version: the new version, or `undefined` refused. */
export async function setMark(
  query: LedgerQuery,
  table: string,
  mark: ResourceMark,
  expected: number | undefined,
): Promise<number | undefined> {
  const { rows } =
    expected === undefined
      ? await query<{ version: number }>(
          `INSERT INTO ${table} (resource_id, version, mark, at, rank, by, horizon)
           VALUES ($1, 1, $2, $3, $4, $5, $6)
           ON CONFLICT (resource_id) DO NOTHING RETURNING version`,
          [...markValues(mark)],
        )
      : await query<{ version: number }>(
          `UPDATE ${table} SET version = version + 1, mark = $2, at = $3, rank = $4, by = $5,
             horizon = $6
           WHERE resource_id = $1 AND version = $7 RETURNING version`,
          [...markValues(mark), expected],
        )
  return rows[0] === undefined ? undefined : Number(rows[0].version)
}

/** One statement: takes, renews or releases a resource's hold (`until` 0) in `table`. */
export async function holdResource(
  query: LedgerQuery,
  table: string,
  resourceId: string,
  owner: string,
  until: number,
  now: number,
): Promise<boolean> {
  const { rowCount } =
    until === 0
      ? await query(`DELETE FROM ${table} WHERE resource_id = $1 AND owner = $2`, [
          rowKey(resourceId),
          owner,
        ])
      : await query(
          `INSERT INTO ${table} AS h (resource_id, owner, until) VALUES ($1, $2, $3)
           ON CONFLICT (resource_id) DO UPDATE SET owner = EXCLUDED.owner, until = EXCLUDED.until
           WHERE h.owner = EXCLUDED.owner OR h.until <= $4`,
          [rowKey(resourceId), owner, until, now],
        )
  return rowCount === 1
}
