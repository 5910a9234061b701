import type {
  HealthOptions,
  HealthReport,
  LedgerEntry,
  LedgerFilter,
  LedgerPage,
  LedgerPurge,
  LedgerPurged,
  LedgerStore,
  ResourceMark,
  StoredLedgerEntry,
  StoredResourceMark,
} from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import { maxBodiesOption, wholeNumber } from '@scheduling-kit/core/store'
import { postgresHealth } from './health.js'
import { assemble, type EntryRow, type LedgerQuery, listLedger } from './ledger-list.js'
import { holdResource, markValues, readMark, setMark } from './ledger-marks.js'
import { PURGE_BATCH, purgeLedger } from './ledger-purge.js'
import {
  DEFAULT_LEDGER_TABLE,
  firstWriteName,
  holdsTableName,
  marksTableName,
  type PostgresPool,
  type PostgresStoreOptions,
  rowKey,
  run,
  tableOf,
} from './sql.js'

export interface PostgresLedgerStoreOptions extends PostgresStoreOptions {
  /**
   * The most unexpired bodies one account keeps for replay. Past it, a new delivery of that
   * account is recorded and run as always, its body not kept (the entry says `bodyCapped`), so a
   * flood of one account cannot fill the table. Default 10 000.
   */
  maxBodiesPerAccount?: number
  /**
   * Rows one statement of `purge()` deletes or updates (default 2,000): a purge runs as many
   * such short statements as it needs, each found on an index, so none holds a long lock.
   */
  purgeBatch?: number
}

const WHO = 'PostgresLedgerStore'

/**
 * A `LedgerStore` in PostgreSQL: one row per delivery, written by compare-and-set on its
 * version in one statement (one round trip), listed newest first by keyset pages on an index,
 * bodies in a column of their own so a purge drops them without touching the entry. Resource
 * marks live in `<table>$marks`. Run `migrate(pool)` first.
 *
 * @example
 * ```ts
 * await migrate(pool)
 * const ledger = createDeliveryLedger({ store: new PostgresLedgerStore({ pool }) })
 * ```
 */
export class PostgresLedgerStore implements LedgerStore {
  readonly #pool: PostgresPool
  readonly #table: string
  readonly #marks: string
  readonly #holds: string
  readonly #first: string
  readonly #schema: string | undefined
  readonly #name: string
  readonly #maxBodies: number
  readonly #purgeBatch: number

  constructor(options: PostgresLedgerStoreOptions) {
    // The bodies are sealed by the ledger, not the store: a cipher here would be taken and
    // ignored, the bodies stored in plain text.
    if ((options as { cipher?: unknown })?.cipher !== undefined)
      throw new ConfigError(
        `${WHO}: cipher is not an option of the store: give it to createDeliveryLedger({ store, cipher }) (or createScheduling's stores: postgresStores({ pool, cipher })), which seals each body before the store keeps it.`,
      )
    this.#maxBodies = maxBodiesOption(WHO, options.maxBodiesPerAccount)
    this.#purgeBatch = wholeNumber(WHO, 'purgeBatch', options.purgeBatch, PURGE_BATCH)
    this.#table = tableOf(WHO, options, DEFAULT_LEDGER_TABLE)
    this.#pool = options.pool
    this.#schema = options.schema
    this.#name = options.table ?? DEFAULT_LEDGER_TABLE
    const schema = this.#table.slice(0, this.#table.lastIndexOf('.'))
    this.#marks = `${schema}.${marksTableName(this.#name)}`
    this.#holds = `${schema}.${holdsTableName(this.#name)}`
    this.#first = `${schema}.${firstWriteName(this.#name)}`
  }

  /** Whether the database answers and the table is migrated, for a readiness route. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return postgresHealth(
      { pool: this.#pool, schema: this.#schema, table: this.#name, kind: 'ledger' },
      options,
    )
  }

  readonly #query: LedgerQuery = (text, values) => run(this.#pool, WHO, this.#table, text, values)

  #run<Row>(text: string, values: unknown[]) {
    return run<Row>(this.#pool, WHO, this.#table, text, values)
  }

  async get(id: string): Promise<StoredLedgerEntry | undefined> {
    const { rows } = await this.#run<EntryRow>(
      `SELECT version, entry, body, body_expires_at, body_capped FROM ${this.#table} WHERE id = $1`,
      [rowKey(id)],
    )
    return rows[0] === undefined ? undefined : assemble(rows[0])
  }

  async write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined> {
    const { rows } = await this.#run<{ version: number | null }>(...this.#write(entry, expected))
    const version = rows[0]?.version
    return version === undefined || version === null ? undefined : Number(version)
  }

  /**
   * The statement that writes an entry by compare-and-set, as `WITH w AS (...)` can hold it. A
   * first write keeps the body while the account keeps fewer unexpired ones than the most (a
   * count bounded by it, on the `$kept` index); a later one keeps or drops it, never sets it.
   */
  #write(entry: LedgerEntry, expected: number | undefined): [string, unknown[]] {
    const { body, bodyExpiresAt, bodyCapped: _capped, ...rest } = entry
    // Ids and accounts as row keys: any length fits the indexes (past 1 KiB, their hash).
    const values: unknown[] = [rowKey(entry.id), JSON.stringify(rest), entry.status, entry.type]
    if (expected !== undefined) {
      values.push(body !== undefined, expected)
      return [
        `UPDATE ${this.#table} SET version = version + 1, entry = $2, status = $3, type = $4,
           body = CASE WHEN $5 THEN body END, body_expires_at = CASE WHEN $5 THEN body_expires_at END
         WHERE id = $1 AND version = $6 RETURNING version`,
        values,
      ]
    }
    values.push(
      body ?? null,
      body === undefined ? null : (bodyExpiresAt ?? Number.MAX_SAFE_INTEGER),
      entry.account === undefined ? null : rowKey(entry.account),
      entry.receivedAt,
      this.#maxBodies,
    )
    // A body of an account: counted and written under the account's lock, in the function's
    // own statements (each sees what the one before it committed), so the bound is exact.
    if (body !== undefined && entry.account !== undefined)
      return [
        `SELECT ${this.#first}($1, $2, $3, $4, $5, $6::bigint, $7, $8::bigint, $9::integer) AS version`,
        values,
      ]
    return [
      `INSERT INTO ${this.#table} AS t
         (id, version, entry, body, body_expires_at, status, type, account, received_at, body_capped)
       SELECT $1, 1, $2, CASE WHEN NOT f.full THEN $5::text END,
         CASE WHEN NOT f.full THEN $6::bigint END, $3, $4, $7, $8, f.full
       FROM (SELECT $5::text IS NOT NULL AND $7::text IS NOT NULL AND (
         SELECT count(*) FROM (SELECT 1 FROM ${this.#table} k WHERE k.account = $7
           AND k.body_expires_at > $8::bigint LIMIT $9::integer) AS kept) >= $9::integer AS full) AS f
       ON CONFLICT (id) DO NOTHING RETURNING version`,
      values,
    ]
  }

  async writeReadingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }> {
    const [statement, values] = this.#write(entry, expected)
    values.push(rowKey(resourceId))
    const { rows } = await this.#run<{
      version: number | null
      mark_version: number | null
      mark: string | null
    }>(
      `WITH w AS (${statement})
       SELECT (SELECT version FROM w) AS version, m.version AS mark_version, m.mark
       FROM (SELECT 1) AS one LEFT JOIN ${this.#marks} m ON m.resource_id = $${values.length}`,
      values,
    )
    const row = rows[0]
    return {
      version: row?.version === null || row === undefined ? undefined : Number(row.version),
      mark:
        row?.mark === null || row === undefined
          ? undefined
          : { ...(JSON.parse(row.mark) as ResourceMark), version: Number(row.mark_version) },
    }
  }

  async writeAdvancingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    mark: ResourceMark,
  ): Promise<number | undefined> {
    const [statement, values] = this.#write(entry, expected)
    const n = values.length
    values.push(...markValues(mark))
    // The mark moves on only with the write, and only past an older one (the ledger's isNewer).
    const { rows } = await this.#run<{ version: number }>(
      `WITH w AS (${statement}),
       m AS (
         INSERT INTO ${this.#marks} AS old (resource_id, version, mark, at, rank, by, horizon)
         SELECT $${n + 1}, 1, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}
         WHERE EXISTS (SELECT 1 FROM w WHERE version IS NOT NULL)
         ON CONFLICT (resource_id) DO UPDATE SET version = old.version + 1, mark = EXCLUDED.mark,
           at = EXCLUDED.at, rank = EXCLUDED.rank, by = EXCLUDED.by, horizon = EXCLUDED.horizon
         WHERE old.by = EXCLUDED.by OR old.at < EXCLUDED.at
           OR (old.at = EXCLUDED.at AND old.rank <= EXCLUDED.rank)
       )
       SELECT version FROM w`,
      values,
    )
    return rows[0] === undefined ? undefined : Number(rows[0].version)
  }

  /** Entries matching `filter`, newest first, one page at a time (ledger-list.ts). */
  list(filter?: LedgerFilter): Promise<LedgerPage> {
    return listLedger(this.#query, this.#table, filter)
  }

  mark(resourceId: string): Promise<StoredResourceMark | undefined> {
    return readMark(this.#query, this.#marks, resourceId)
  }

  setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined> {
    return setMark(this.#query, this.#marks, mark, expected)
  }

  /** One statement: takes, renews or releases a resource's hold (ledger-marks.ts). */
  holdResource(resourceId: string, owner: string, until: number, now: number): Promise<boolean> {
    return holdResource(this.#query, this.#holds, resourceId, owner, until, now)
  }

  /** Drops what `what` says is over (ledger-purge.ts). */
  purge(what: LedgerPurge): Promise<LedgerPurged> {
    const tables = { entries: this.#table, marks: this.#marks }
    return purgeLedger(this.#query, tables, what, this.#purgeBatch)
  }
}
