import { LEDGER_MIGRATIONS } from './ledger-migrations.js'
import {
  identifier,
  type Migration,
  retriesTableName,
  sweepsTableName,
  type TableKind,
  webhookIndexName,
} from './sql.js'

// The stores' tables, as versioned SQL: what `migrate` applies, in order, and what each store's
// `health()` expects applied.

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
  ...LEDGER_MIGRATIONS,
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
  // subscriptions@5: the app's request rates beside the shards (`PostgresSweepStore` as a
  // `RateCapStore`): a row per rate with its requests a second, when it last moved, the end of
  // its pause and its last turn, in ms (double precision: turns keep their fraction).
  {
    kind: 'subscriptions',
    version: 5,
    sql: (_t, name, schema) => `ALTER TABLE ${schema}.${sweepsTableName(name)}
      ADD COLUMN rate_per_second double precision,
      ADD COLUMN rate_moved_at double precision,
      ADD COLUMN rate_paused_until double precision,
      ADD COLUMN rate_last_at double precision`,
  },
  // subscriptions@6: the held tries of periodic work that failed for one account (a refresh
  // ahead of expiry), by task and key: when each comes due, and its failures in a row
  // (`PostgresSweepStore` as a `RetryStore`).
  {
    kind: 'subscriptions',
    version: 6,
    sql: (_t, name, schema) => `CREATE TABLE ${schema}.${retriesTableName(name)} (
      task text NOT NULL,
      key text NOT NULL,
      due_at double precision NOT NULL,
      failures integer NOT NULL,
      PRIMARY KEY (task, key)
    );
    CREATE INDEX "${name.slice(0, 50)}$retries_due" ON ${schema}.${retriesTableName(name)} (task, due_at)`,
  },
]

/** The newest migration of each kind of table: what a store's `health()` expects applied. */
export const LATEST_VERSIONS: Record<TableKind, number> = {
  tokens: Math.max(...MIGRATIONS.filter((m) => m.kind === 'tokens').map((m) => m.version)),
  dedupe: Math.max(...MIGRATIONS.filter((m) => m.kind === 'dedupe').map((m) => m.version)),
  subscriptions: Math.max(
    ...MIGRATIONS.filter((m) => m.kind === 'subscriptions').map((m) => m.version),
  ),
  ledger: Math.max(...MIGRATIONS.filter((m) => m.kind === 'ledger').map((m) => m.version)),
}
