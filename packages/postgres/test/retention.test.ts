import type { LedgerEntry } from '@scheduling-kit/core'
import { describe, expect, it } from 'vitest'
import { PostgresLedgerStore } from '../src/index.js'
import { migratedSchema, pool } from './helpers.js'

// Retention at size: a purge runs in short statements of at most `purgeBatch` rows, found on an
// index; a row a write holds is skipped (the next purge takes it) rather than waited for; an
// account's erasure waits for it; and the tables autovacuum at 2% dead rows (ledger@4).

const DAY = 86_400_000

/** A pool whose purge statements are recorded with the rows each touched. */
function recorded(inner: ReturnType<typeof pool>) {
  const statements: { text: string; rows: number }[] = []
  const wrapped = {
    query: async (text: string, values?: unknown[]) => {
      const result = await inner.query(text, values)
      if (/^\s*(DELETE|UPDATE)/.test(text) && /LIMIT \$2/.test(text))
        statements.push({ text, rows: result.rowCount ?? 0 })
      return result
    },
    connect: () => inner.connect(),
  }
  return { pool: wrapped as unknown as ReturnType<typeof pool>, statements }
}

const entry = (n: number, receivedAt: number, account = 'acct_1'): LedgerEntry => ({
  id: `dlv_${n}`,
  payloadId: `payload_${n}`,
  type: 'event.created',
  account,
  status: 'done',
  attempts: 1,
  source: 'webhook',
  receivedAt,
  updatedAt: receivedAt,
  body: `{"n":${n}}`,
  bodyExpiresAt: receivedAt + 7 * DAY,
})

describe('PostgresLedgerStore retention', () => {
  it('purges 5,000 entries past retention in statements of at most purgeBatch rows; the rest stays', async () => {
    const shared = pool(4)
    const schema = await migratedSchema('retention', shared)
    const { pool: counted, statements } = recorded(shared)
    const store = new PostgresLedgerStore({ pool: counted, schema, purgeBatch: 400 })
    const now = Date.now()
    const table = `${schema}.scheduling_kit_ledger`
    // 5,000 entries 40 days old, 1,000 of today, written in one statement.
    await shared.query(
      `INSERT INTO ${table} (id, version, entry, status, type, account, received_at)
       SELECT 'dlv_' || n, 1, '{}', 'done', 'event.created', 'acct_1',
              CASE WHEN n <= 5000 THEN $1::bigint ELSE $2::bigint END
       FROM generate_series(1, 6000) AS n`,
      [now - 40 * DAY, now],
    )
    const purged = await store.purge({ entriesBefore: now - 30 * DAY })
    expect(purged.entries).toBe(5_000)
    const deletes = statements.filter((s) => s.text.includes('received_at < $1'))
    expect(deletes.map((s) => s.rows)).toEqual([...Array(12).fill(400), 200])
    const left = await shared.query(`SELECT count(*)::int AS n FROM ${table}`)
    expect(left.rows[0].n).toBe(1_000)
    // Nothing due: one statement, nothing touched.
    statements.length = 0
    expect((await store.purge({ entriesBefore: now - 30 * DAY })).entries).toBe(0)
    expect(statements.map((s) => s.rows)).toEqual([0])
  })

  it('a row a write holds is skipped by retention (taken by the next purge), never waited for; an account erasure waits for it and drops its body', async () => {
    const shared = pool(4)
    const schema = await migratedSchema('retention_locks', shared)
    const store = new PostgresLedgerStore({ pool: shared, schema, purgeBatch: 2 })
    const now = Date.now()
    for (let n = 1; n <= 5; n++)
      expect(await store.write(entry(n, now - 40 * DAY), undefined)).toBe(1)
    const table = `"${schema}".scheduling_kit_ledger`
    const writer = await shared.connect()
    try {
      await writer.query('BEGIN')
      await writer.query(`SELECT 1 FROM ${table} WHERE id = 'dlv_3' FOR UPDATE`)
      // Retention does not wait on the held row: it resolves while the row is still held.
      const purged = await store.purge({
        entriesBefore: now - 30 * DAY,
        bodiesBefore: now,
      })
      expect(purged.entries).toBe(4)
      expect(await store.get('dlv_3')).toMatchObject({ id: 'dlv_3' })
      // An erasure of the account's bodies waits for the write, then drops the body.
      const erasure = store.purge({ account: 'acct_1' })
      await waitUntil(async () => {
        const waiting = await shared.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%account = $1 AND body IS NOT NULL%'`,
        )
        return waiting.rows[0].n > 0
      })
      await writer.query('COMMIT')
      expect(await erasure).toMatchObject({ bodies: 1 })
      expect((await store.get('dlv_3'))?.body).toBeUndefined()
    } finally {
      writer.release()
    }
    expect((await store.purge({ entriesBefore: now - 30 * DAY })).entries).toBe(1)
  })

  it('the entries and marks tables autovacuum at 2% dead rows (ledger@4)', async () => {
    const shared = pool(2)
    const schema = await migratedSchema('retention_vacuum', shared)
    const { rows } = await shared.query(
      `SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname IN ('scheduling_kit_ledger', 'scheduling_kit_ledger$marks')
       ORDER BY c.relname`,
      [schema],
    )
    expect(rows).toHaveLength(2)
    for (const row of rows)
      expect(row.reloptions).toEqual(
        expect.arrayContaining([
          'autovacuum_vacuum_scale_factor=0.02',
          'autovacuum_vacuum_threshold=1000',
        ]),
      )
  })
})

/** Resolves once `check` answers true, asking again on each turn of a short poll. */
async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10))
}
