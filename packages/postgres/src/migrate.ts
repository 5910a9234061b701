import { ConfigError } from '@scheduling-kit/core'
import {
  DEFAULT_DEDUPE_TABLE,
  DEFAULT_LEDGER_TABLE,
  DEFAULT_SCHEMA,
  DEFAULT_SUBSCRIPTION_TABLE,
  DEFAULT_TOKEN_TABLE,
  firstWriteName,
  holdsTableName,
  identifier,
  MIGRATIONS_TABLE,
  marksTableName,
  type PostgresPool,
  webhookIndexName,
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

/** What a table holds. */
export type TableKind = 'tokens' | 'dedupe' | 'subscriptions' | 'ledger'

interface Migration {
  kind: TableKind
  version: number
  sql(table: string, name: string, schema: string): string
}

/**
 * The dedupe table's expiry index: `<table>$expires`. A table name (checked: letters, digits
 * and `_`) never holds a `$`, so no table of ours can clash with it (`<table>_expires` could be
 * the token table's name).
 */
const expiresIndex = (name: string) => `"${name.slice(0, 54)}$expires"`

/**
 * The versioned SQL, in order. Never edit an applied one: append a new version.
 *
 * tokens: one row per key. `record` is the token record (NULL when deleted: the row keeps its
 * `version`, so a compare-and-set based on a read before the delete fails); the refresh lease
 * is `lease_owner` until `lease_expires_at`, compared on the database clock.
 * dedupe: one row per claimed key, `in_progress` until its lease ends or `completed` until its
 * time is up.
 */
const MIGRATIONS: Migration[] = [
  {
    kind: 'tokens',
    version: 1,
    sql: (t) => `CREATE TABLE ${t} (
      key text PRIMARY KEY,
      record jsonb,
      version integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_expires_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`,
  },
  {
    kind: 'dedupe',
    version: 1,
    sql: (t, name) => `CREATE TABLE ${t} (
      key text PRIMARY KEY,
      owner text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_progress', 'completed')),
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX ${expiresIndex(name)} ON ${t} (expires_at)`,
  },
  {
    // Databases migrated before the index was named `<table>$expires` have `<table>_expires`.
    kind: 'dedupe',
    version: 2,
    sql: (t, name, schema) => `DO $$
    BEGIN
      IF EXISTS (
        SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = '${t.replaceAll("'", "''")}'::regclass
          AND c.relname = '${`${name.slice(0, 50)}_expires`}'
      ) THEN
        ALTER INDEX ${schema}.${identifier('migrate', 'index', `${name.slice(0, 50)}_expires`)}
          RENAME TO ${expiresIndex(name)};
      END IF;
    END $$`,
  },
  // subscriptions: one row per account (`key` as rowKey holds it, `account` the key itself),
  // its record (NULL once deleted: the version stays), the webhook ids it lists (GIN-indexed,
  // for the lookup of each delivery), and the account's lease.
  {
    kind: 'subscriptions',
    version: 1,
    sql: (t, name) => `CREATE TABLE ${t} (
      key text PRIMARY KEY,
      account text NOT NULL,
      record jsonb,
      webhook_ids text[] NOT NULL DEFAULT '{}',
      version integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_expires_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX "${name.slice(0, 54)}$webhooks" ON ${t} USING gin (webhook_ids)`,
  },
  // The webhook-id lookup as a primary-key probe: the planner served the GIN index poorly (a
  // scan of the table at 100,000 accounts). Filled from the rows already there.
  {
    kind: 'subscriptions',
    version: 2,
    sql: (t, name, schema) => {
      const index = `${schema}.${webhookIndexName(name)}`
      return `CREATE TABLE ${index} (
        webhook_id text PRIMARY KEY,
        key text NOT NULL
      );
      CREATE INDEX "${name.slice(0, 50)}$by_webhook_key" ON ${index} (key);
      INSERT INTO ${index} (webhook_id, key)
        SELECT id, key FROM ${t}, unnest(webhook_ids) AS id WHERE record IS NOT NULL
        ON CONFLICT (webhook_id) DO NOTHING`
    },
  },
  // ledger: one row per delivery (`id` and `account` as row keys), the entry as JSON without
  // its body, the body in a column of its own; indexed newest first (all, per account) and by
  // body expiry. Resource marks in `<table>$marks`.
  {
    kind: 'ledger',
    version: 1,
    sql: (t, name, schema) => `CREATE TABLE ${t} (
      id text PRIMARY KEY,
      version integer NOT NULL,
      entry text NOT NULL,
      body text,
      body_expires_at bigint,
      status text NOT NULL,
      type text NOT NULL,
      account text,
      received_at bigint NOT NULL
    );
    CREATE INDEX "${name.slice(0, 54)}$by_time" ON ${t} (received_at DESC, id COLLATE "C" DESC);
    CREATE INDEX "${name.slice(0, 51)}$by_account" ON ${t} (account, received_at DESC, id COLLATE "C" DESC)
      WHERE account IS NOT NULL;
    CREATE INDEX "${name.slice(0, 55)}$bodies" ON ${t} (body_expires_at) WHERE body_expires_at IS NOT NULL;
    CREATE TABLE ${schema}.${marksTableName(name)} (
      resource_id text PRIMARY KEY,
      version integer NOT NULL,
      mark text NOT NULL,
      at bigint NOT NULL,
      rank integer NOT NULL,
      by text NOT NULL
    )`,
  },
  // ledger@2: each account's kept bodies counted on an index, for `maxBodiesPerAccount`; an
  // entry whose body was not kept for it says so; `<table>$holds`, the resource holds that run
  // one delivery of an Event at a time across processes.
  {
    kind: 'ledger',
    version: 2,
    sql: (
      t,
      name,
      schema,
    ) => `ALTER TABLE ${t} ADD COLUMN body_capped boolean NOT NULL DEFAULT false;
    CREATE INDEX "${name.slice(0, 55)}$kept" ON ${t} (account, body_expires_at)
      WHERE body_expires_at IS NOT NULL AND account IS NOT NULL;
    CREATE TABLE ${schema}.${holdsTableName(name)} (
      resource_id text PRIMARY KEY,
      owner text NOT NULL,
      until bigint NOT NULL
    )`,
  },
  // ledger@3: each mark's horizon (when it was last applied, or its Event's end when later),
  // indexed, so a purge drops the marks past retention; and `<table>$first`, the first write
  // of an entry with a body: under a lock per account (held to its commit) it counts the
  // account's kept bodies in a statement of its own, so concurrent first writes see each
  // other and `maxBodiesPerAccount` holds exactly.
  {
    kind: 'ledger',
    version: 3,
    sql: (t, name, schema) => {
      const marks = `${schema}.${marksTableName(name)}`
      return `ALTER TABLE ${marks} ADD COLUMN horizon bigint;
    UPDATE ${marks} SET horizon = coalesce((mark::jsonb ->> 'appliedAt')::bigint, at);
    ALTER TABLE ${marks} ALTER COLUMN horizon SET NOT NULL;
    CREATE INDEX "${name.slice(0, 48)}$marks_horizon" ON ${marks} (horizon);
    CREATE FUNCTION ${schema}.${firstWriteName(name)}(p_id text, p_entry text, p_status text,
      p_type text, p_body text, p_expires bigint, p_account text, p_received bigint, p_max integer)
    RETURNS integer LANGUAGE plpgsql VOLATILE AS $first$
    DECLARE
      is_full boolean;
      written integer;
    BEGIN
      PERFORM pg_advisory_xact_lock(hashtext(${quoteLiteral(t)}), hashtext(p_account));
      SELECT count(*) >= p_max INTO is_full FROM (SELECT 1 FROM ${t} k
        WHERE k.account = p_account AND k.body_expires_at > p_received LIMIT p_max) AS kept;
      INSERT INTO ${t} (id, version, entry, body, body_expires_at, status, type, account,
          received_at, body_capped)
        VALUES (p_id, 1, p_entry, CASE WHEN NOT is_full THEN p_body END,
          CASE WHEN NOT is_full THEN p_expires END, p_status, p_type, p_account, p_received, is_full)
        ON CONFLICT (id) DO NOTHING RETURNING version INTO written;
      RETURN written;
    END $first$`
    },
  },
]

/** A SQL string literal of `text`. */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

/** The newest migration of each kind of table: what a store's `health()` expects applied. */
export const LATEST_VERSIONS: Record<TableKind, number> = {
  tokens: Math.max(...MIGRATIONS.filter((m) => m.kind === 'tokens').map((m) => m.version)),
  dedupe: Math.max(...MIGRATIONS.filter((m) => m.kind === 'dedupe').map((m) => m.version)),
  subscriptions: Math.max(
    ...MIGRATIONS.filter((m) => m.kind === 'subscriptions').map((m) => m.version),
  ),
  ledger: Math.max(...MIGRATIONS.filter((m) => m.kind === 'ledger').map((m) => m.version)),
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
