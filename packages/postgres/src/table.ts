import type { ReencryptResult } from '@scheduling-kit/core'
import { cipherOption, RecordSealer } from '@scheduling-kit/core/store'
import type { TablePlace } from './health.js'
import {
  type PostgresPool,
  reencryptRows,
  rowKey,
  run,
  type SealedStoreOptions,
  tableOf,
} from './sql.js'

/**
 * A store's table, for the token and subscription stores (each holds one, privately): one table of rows keyed by `rowKey`, each
 * record sealed when a cipher is given, a version for compare-and-set, a lease as two columns.
 */
export class SealedTable<R extends object> {
  readonly pool: PostgresPool
  readonly table: string
  readonly sealer: RecordSealer<R>
  /** The table as its options name it, for `health()`. */
  readonly place: TablePlace

  constructor(
    readonly who: string,
    options: SealedStoreOptions,
    defaultTable: string,
    kind: 'token' | 'subscription',
  ) {
    this.table = tableOf(who, options, defaultTable)
    this.pool = options.pool
    this.place = {
      pool: options.pool,
      schema: options.schema,
      table: options.table ?? defaultTable,
      kind: kind === 'token' ? 'tokens' : 'subscriptions',
    }
    this.sealer = new RecordSealer(cipherOption(who, options.cipher), kind)
  }

  query<Row>(text: string, values: unknown[]) {
    return run<Row>(this.pool, this.who, this.table, text, values)
  }

  /** The key's record, opened, with its version; `undefined` when there is none. */
  async read(key: string): Promise<(R & { version: number }) | undefined> {
    const { rows } = await this.query<{ record: unknown; version: number }>(
      `SELECT record, version FROM ${this.table} WHERE key = $1 AND record IS NOT NULL`,
      [rowKey(key)],
    )
    const row = rows[0]
    if (row === undefined) return undefined
    return { ...(await this.sealer.read(key, row.record)), version: row.version }
  }

  /** Reseals every row not sealed under the cipher's current key (see the stores' `reencrypt`). */
  reencrypt(
    keyOf: (row: { key: string; account?: string }) => string | undefined,
    withAccount: boolean,
  ): Promise<ReencryptResult> {
    return reencryptRows(
      (text, values) => this.query(text, values),
      this.table,
      this.sealer,
      keyOf,
      withAccount,
    )
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    await this.query(
      `UPDATE ${this.table} SET lease_owner = NULL, lease_expires_at = NULL
       WHERE key = $1 AND lease_owner = $2`,
      [rowKey(key), owner],
    )
  }
}
