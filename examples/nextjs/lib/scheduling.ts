// The app's one module of scheduling-kit, configured from process.env, loaded at first use.
// `next build` imports every route without the runtime's environment, and a serverless route
// starts with what its module imports: `lazyScheduling` reads the options at the first
// delivery, request or cron call, and only then loads the toolkit's parts (the OAuth flow, the
// subscriptions, the refresh ahead, the sweep) and, through the options function, the
// PostgreSQL stores and `pg`. A route importing this module starts with the webhook path alone.
// A missing variable is told at first use: the toolkit's options as `createScheduling` tells
// them (`apiUrl is the API address...`), the app's own (APP_URL, DATABASE_URL) by name.
import { lazyScheduling } from '@scheduling-kit/core/lazy'
import type pg from 'pg'

/** A variable the app cannot run without: its absence is told at first use. */
function required(name: string): string {
  const value = process.env[name]
  if (value === undefined || value === '') throw new Error(`${name} is not set.`)
  return value
}

/** A duration from the environment, for a deployment (or a test) that wants another. */
function ms(name: string, fallback: number): number {
  const value = process.env[name]
  return value === undefined || value === '' ? fallback : Number(value)
}

let pool: Promise<pg.Pool> | undefined
/** The app's pool: one per process, opened (and `pg` loaded) at first use. */
export function database(): Promise<pg.Pool> {
  pool ??= import('pg').then(
    ({ default: { Pool } }) => new Pool({ connectionString: required('DATABASE_URL'), max: 5 }),
  )
  // A failed first use (the variable unset) is told again at the next, not kept.
  pool.catch(() => {
    pool = undefined
  })
  return pool
}

/**
 * The schema of the toolkit's tables and the app's own (`pnpm migrate` makes them): a plain
 * identifier, since the app's queries name it.
 */
export function schema(): string {
  const name = process.env.DATABASE_SCHEMA || 'public'
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name))
    throw new Error('DATABASE_SCHEMA must be a plain identifier (letters, digits, _).')
  return name
}

export const scheduling = lazyScheduling(async () => {
  const appUrl = required('APP_URL')
  const { postgresStores } = await import('@scheduling-kit/postgres')
  // How much of its schedule one step covers (default a hundredth of the period): a short
  // period (a test's) needs more, or each step takes longer than the time it covers.
  const step = process.env.PERIODIC_STEP_MS ? { maxStepMs: ms('PERIODIC_STEP_MS', 0) } : {}
  return {
    clientId: process.env.SCHEDULING_CLIENT_ID!,
    clientSecret: process.env.SCHEDULING_CLIENT_SECRET!,
    authUrl: process.env.SCHEDULING_AUTH_URL!,
    apiUrl: process.env.SCHEDULING_API_URL!,
    redirectUri: `${appUrl}/auth/scheduling/callback`,
    webhookUrl: `${appUrl}/webhooks/scheduling`,
    cookieSecret: process.env.COOKIE_SECRET!,
    stores: postgresStores({ pool: await database(), schema: schema() }),
    // The periodic work, run by the cron route (app/api/cron/route.ts) at any cadence: each
    // account's webhook checked once an hour, each token refreshed once every 100 minutes.
    sweep: { periodMs: ms('SWEEP_PERIOD_MS', 3_600_000), ...step },
    refreshAhead: { everyMs: ms('REFRESH_EVERY_MS', 6_000_000), ...step },
  }
})
