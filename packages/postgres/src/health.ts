import type { HealthOptions, HealthReport } from '@scheduling-kit/core'
import { HealthProblem, healthReport, runCheck } from '@scheduling-kit/core/store'
import { LATEST_VERSIONS } from './migrations.js'
import {
  DEFAULT_SCHEMA,
  identifier,
  MIGRATIONS_TABLE,
  type PostgresPool,
  type TableKind,
} from './sql.js'

/** Where a store's table is, as its options name it. */
export interface TablePlace {
  pool: PostgresPool
  schema: string | undefined
  table: string
  kind: TableKind
}

/**
 * A Postgres store's `health()`: the database answers (`postgres`), and every migration of
 * the store's table is applied (`postgres.migrations`: `migrate()` was run since the last
 * upgrade of this package).
 */
export async function postgresHealth(
  place: TablePlace,
  options?: HealthOptions,
): Promise<HealthReport> {
  const timeoutMs = options?.timeoutMs
  const { pool, table, kind } = place
  const schema = place.schema ?? DEFAULT_SCHEMA
  const reached = await runCheck(
    'postgres',
    () => pool.query('SELECT 1').then(() => undefined),
    timeoutMs,
  )
  if (!reached.ok) return healthReport([reached])
  const latest = LATEST_VERSIONS[kind]
  const migrations = await runCheck(
    'postgres.migrations',
    async () => {
      const log = `${identifier('health', 'schema', schema)}.${identifier('health', 'table', MIGRATIONS_TABLE)}`
      let version: number
      try {
        const { rows } = await pool.query(
          `SELECT coalesce(max(version), 0) AS version FROM ${log} WHERE table_name = $1`,
          [table],
        )
        version = Number((rows[0] as { version?: unknown } | undefined)?.version ?? 0)
      } catch (error) {
        if ((error as { code?: string }).code !== '42P01') throw error
        version = 0
      }
      if (version < latest) {
        throw new HealthProblem(
          version === 0
            ? `${schema}.${table} is not migrated: run migrate(pool).`
            : `${schema}.${table} is at migration ${version} of ${latest}: run migrate(pool).`,
        )
      }
      return `${schema}.${table} at migration ${version}`
    },
    timeoutMs,
  )
  return healthReport([reached, migrations])
}
