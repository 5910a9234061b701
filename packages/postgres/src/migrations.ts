import {
  firstWriteName,
  holdsTableName,
  identifier,
  marksTableName,
  sweepsTableName,
  webhookIndexName,
} from './sql.js'

// The stores' tables, as versioned SQL: what `migrate` applies, in order, and what each store's
// `health()` expects applied.

/** What a table holds. */
export type TableKind = 'tokens' | 'dedupe' | 'subscriptions' | 'ledger'

export interface Migration {
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
export const MIGRATIONS: Migration[] = [
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
  // ledger@4: autovacuum of the entries and the marks at 2% of their rows dead (PostgreSQL's
  // default is 20%): a purge's deletes and body drops leave at most about that many dead rows
  // between vacuums, whatever the table's size. Settings of the tables only: nothing rewritten.
  {
    kind: 'ledger',
    version: 4,
    sql: (t, name, schema) => {
      const settings = `(autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
        autovacuum_analyze_scale_factor = 0.02)`
      return `ALTER TABLE ${t} SET ${settings};
    ALTER TABLE ${schema}.${marksTableName(name)} SET ${settings}`
    },
  },
  // subscriptions@3: `<table>$sweeps`, the shards of `subscriptions.sweep()`: each one's lease
  // and the time through which its accounts were checked (`PostgresSweepStore`).
  {
    kind: 'subscriptions',
    version: 3,
    sql: (_t, name, schema) => `CREATE TABLE ${schema}.${sweepsTableName(name)} (
      name text PRIMARY KEY,
      through bigint,
      version integer NOT NULL DEFAULT 0,
      lease_owner text,
      lease_expires_at timestamptz
    )`,
  },
  // subscriptions@4: each account's sweep phase (`phaseOf` of its key, written with its
  // record), indexed with the key, so a sweep's step reads only its window's accounts. Rows
  // written before it (or by an instance of an earlier version) are given theirs by the store
  // as it reads by phase, found on a partial index that is empty once they are.
  {
    kind: 'subscriptions',
    version: 4,
    sql: (t, name) => `ALTER TABLE ${t} ADD COLUMN sweep_phase bigint;
    CREATE INDEX "${name.slice(0, 50)}$by_phase" ON ${t} (sweep_phase, key)
      WHERE record IS NOT NULL;
    CREATE INDEX "${name.slice(0, 50)}$no_phase" ON ${t} (key)
      WHERE record IS NOT NULL AND sweep_phase IS NULL`,
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
