// What a health check answers, and the report an in-memory store gives: the small part of
// readiness every store carries. The checks themselves (health.ts) load when first asked.

/** One thing checked: a connection, a table's migrations, a queue's client. */
export interface HealthCheck {
  /** What was checked, e.g. `redis`, `postgres.migrations`, `webhooks.dedupe.redis`. */
  name: string
  ok: boolean
  /** How long the check took, in ms. */
  ms: number
  /** What is wrong (or, when ok, a note such as `in memory`): never a secret. */
  detail?: string
}

/** What `health()` answers: `ok` when every check is. */
export interface HealthReport {
  ok: boolean
  checks: HealthCheck[]
}

/** Anything with a `health()`: the webhook handler, the Redis and Postgres stores, the BullMQ queue and worker. */
export interface HealthChecked {
  health(options?: HealthOptions): Promise<HealthReport>
}

export interface HealthOptions {
  /** Longest a check may take before it counts as failed, in ms. Default 2 000. */
  timeoutMs?: number
}

/** What an in-memory store answers: ready, and only in this process. */
export const memoryHealth = (): HealthReport =>
  healthReport([{ name: 'memory', ok: true, ms: 0, detail: 'in this process only' }])

/** A report of checks: ok when all are. */
export const healthReport = (checks: HealthCheck[]): HealthReport => ({
  ok: checks.every((check) => check.ok),
  checks,
})
