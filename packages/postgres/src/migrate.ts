import { ConfigError } from '@scheduling-kit/core'
import { MIGRATIONS } from './migrations.js'
import {
  DEFAULT_DEDUPE_TABLE,
  DEFAULT_LEDGER_TABLE,
  DEFAULT_SCHEMA,
  DEFAULT_SUBSCRIPTION_TABLE,
  DEFAULT_TOKEN_TABLE,
  identifier,
  MIGRATIONS_TABLE,
  type PostgresPool,
} from './sql.js'

export interface MigrateOptions {
  /** Schema to create the tables in (created when missing). Default `public`. */
  schema?: string
  /** Default `scheduling_kit_tokens`: pass the same `table` to `PostgresTokenStore`. */
  tokenTable?: string
  /** Default `scheduling_kit_dedupe`: pass the same `table` to `PostgresDedupeStore`. */
  dedupeTable?: string
  /** Default `scheduling_kit_subscriptions`: pass the same `table` to `PostgresSubscriptionStore`. */
  subscriptionTable?: string
  /** Default `scheduling_kit_ledger`: pass the same `table` to `PostgresLedgerStore`. */
  ledgerTable?: string
  /**
   * Only these kinds of tables, for a package that needs one of them (the PostgreSQL queue's
   * worker needs the dedupe table). Default all four.
   */
  only?: readonly ('tokens' | 'dedupe' | 'subscriptions' | 'ledger')[]
}

export interface MigrateResult {
  /** Migrations this call applied, as `table@version`; empty when all were already there. */
  applied: string[]
}

/**
 * Creates or updates the stores' tables. Safe when many instances start at once: the work
 * runs in one transaction under a transaction-scoped advisory lock (released at commit, so it
 * holds behind pgbouncer in transaction mode too), and each applied version is recorded in
 * `scheduling_kit_migrations`.
 *
 * @example
 * ```ts
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * await migrate(pool)
 * const tokenStore = new PostgresTokenStore({ pool })
 * ```
 */
export async function migrate(
  pool: PostgresPool,
  options: MigrateOptions = {},
): Promise<MigrateResult> {
  if (typeof pool?.connect !== 'function') {
    throw new ConfigError('migrate: pass a pg Pool (new pg.Pool({ connectionString })).')
  }
  const schemaName = options.schema ?? DEFAULT_SCHEMA
  const schema = identifier('migrate', 'schema', schemaName)
  const names = {
    tokens: options.tokenTable ?? DEFAULT_TOKEN_TABLE,
    dedupe: options.dedupeTable ?? DEFAULT_DEDUPE_TABLE,
    subscriptions: options.subscriptionTable ?? DEFAULT_SUBSCRIPTION_TABLE,
    ledger: options.ledgerTable ?? DEFAULT_LEDGER_TABLE,
  }
  if (new Set(Object.values(names)).size !== 4) {
    throw new ConfigError(
      'migrate: tokenTable, dedupeTable, subscriptionTable and ledgerTable must be four different tables.',
    )
  }
  const tables = {
    tokens: `${schema}.${identifier('migrate', 'tokenTable', names.tokens)}`,
    dedupe: `${schema}.${identifier('migrate', 'dedupeTable', names.dedupe)}`,
    subscriptions: `${schema}.${identifier('migrate', 'subscriptionTable', names.subscriptions)}`,
    ledger: `${schema}.${identifier('migrate', 'ledgerTable', names.ledger)}`,
  }
  const log = `${schema}.${identifier('migrate', 'table', MIGRATIONS_TABLE)}`
  const client = await pool.connect()
  const applied: string[] = []
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `scheduling-kit:migrate:${schemaName}`,
    ])
    // CREATE SCHEMA IF NOT EXISTS needs the database's CREATE privilege even when the schema
    // exists: a role that owns its schema but may not create one would be refused.
    const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName])
    if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`)
    await client.query(`CREATE TABLE IF NOT EXISTS ${log} (
      table_name text NOT NULL,
      version integer NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (table_name, version)
    )`)
    const done = await client.query<{ table_name: string; version: number }>(
      `SELECT table_name, version FROM ${log} WHERE table_name = ANY($1)`,
      [Object.values(names)],
    )
    const have = new Set(done.rows.map((r) => `${r.table_name}@${r.version}`))
    for (const migration of MIGRATIONS) {
      if (options.only !== undefined && !options.only.includes(migration.kind)) continue
      const name = names[migration.kind]
      const id = `${name}@${migration.version}`
      if (have.has(id)) continue
      await client.query(migration.sql(tables[migration.kind], name, schema))
      await client.query(`INSERT INTO ${log} (table_name, version) VALUES ($1, $2)`, [
        name,
        migration.version,
      ])
      applied.push(id)
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
  return { applied }
}
