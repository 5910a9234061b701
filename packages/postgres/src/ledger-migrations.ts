import { firstWriteName, holdsTableName, type Migration, marksTableName } from './sql.js'

// The delivery ledger's tables, as versioned SQL (`migrations.ts` applies them in its order):
// the entries, the resource marks, the holds, and the first write of an entry with a body.

export const LEDGER_MIGRATIONS: Migration[] = [
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
]

/** A SQL string literal of `text`. */
function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
