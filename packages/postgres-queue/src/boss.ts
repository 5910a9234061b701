import type { HealthOptions, Logger } from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import { HealthProblem, runCheck } from '@scheduling-kit/core/queue'
import { PgBoss } from 'pg-boss'

/** What the queue needs of the app's pool: a `pg` Pool. */
export interface QueuePool {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

/** The Node.js this package needs (pg-boss 12's own floor). */
export const NODE_NEEDED = '22.12.0'

/**
 * Throws at once on a Node.js older than `NODE_NEEDED`, naming both, instead of failing later
 * and obscurely inside pg-boss. `version` is the running one by default.
 */
export function checkNode(who: string, version: string = process.versions.node): void {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  const [needMajor, needMinor] = NODE_NEEDED.split('.').map(Number) as [number, number]
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return
  throw new ConfigError(
    `${who}: needs Node.js ${NODE_NEEDED} or later (pg-boss 12 does); this is Node.js ${version}.`,
  )
}

export function checkPool(who: string, pool: unknown): QueuePool {
  if (typeof (pool as QueuePool | undefined)?.query !== 'function') {
    throw new ConfigError(`${who}: pool must be a pg Pool (new pg.Pool({ connectionString })).`)
  }
  return pool as QueuePool
}

/** The options every pg-boss instance of this package is made with. */
export interface BossSettings {
  pool: QueuePool
  schema: string
  /** Install or upgrade pg-boss's tables when starting (its advisory lock makes that safe). */
  migrate: boolean
  /** Run pg-boss's maintenance (expiry, heartbeats, retention) from this instance. */
  supervise: boolean
}

/**
 * pg-boss on the app's pool: every statement goes through `pool.query`, so the pool's own
 * settings (TLS, size, pgbouncer) hold, and no connection of pg-boss's own is opened. There is
 * no LISTEN (workers poll), which is also what lets it run behind pgbouncer in transaction mode.
 */
export function newBoss(settings: BossSettings): PgBoss {
  const boss = new PgBoss({
    db: {
      executeSql: (text, values) =>
        settings.pool.query(text, values) as Promise<{ rows: unknown[] }> as Promise<{
          rows: never[]
        }>,
    },
    schema: settings.schema,
    migrate: settings.migrate,
    supervise: settings.supervise,
    schedule: false,
    // Expired heartbeats are failed (and so retried) by the monitor pass, every 60 s by default:
    // every 5 s instead, so a dead worker's job runs again within about 15 s, not 70.
    superviseIntervalSeconds: 5,
    monitorIntervalSeconds: 5,
    openTelemetry: { enabled: false },
  })
  // An error event with no listener would end the process: each failure is told where it
  // happens (a refused enqueue, a job's attempt), and pg-boss retries its own maintenance.
  boss.on('error', () => {})
  return boss
}

/** Where a pg-boss instance is in its life: starting (again after a failure), started, closed. */
export type BossState =
  | { kind: 'starting'; attempt: number; error?: Error }
  | { kind: 'started' }
  | { kind: 'closed' }

/** How long to wait before the next start, after `attempt` failed ones: 0.5 s doubling, at most 5 s. */
export function nextStartDelayMs(attempt: number): number {
  return Math.min(5_000, 500 * 2 ** Math.min(attempt, 10))
}

/**
 * Starts pg-boss, and starts it again until it is up: a database unreachable at boot delays
 * the start, it does not end it. `onStarted` runs once started (create the queue, start
 * workers); a failure there counts as a failed start.
 */
export class BossStarter {
  state: BossState = { kind: 'starting', attempt: 0 }
  readonly #boss: PgBoss
  readonly #onStarted: () => Promise<void>
  readonly #log: Pick<Logger, 'warn'>
  readonly #who: string
  #timer: ReturnType<typeof setTimeout> | undefined
  #waiters: (() => void)[] = []
  /** Told when the first start attempt ends, whichever way. */
  #firstTold: (() => void)[] = []

  constructor(
    who: string,
    boss: PgBoss,
    onStarted: () => Promise<void>,
    log: Pick<Logger, 'warn'>,
  ) {
    this.#who = who
    this.#boss = boss
    this.#onStarted = onStarted
    this.#log = log
    void this.#try()
  }

  async #try(): Promise<void> {
    if (this.state.kind !== 'starting') return
    try {
      await this.#boss.start()
      await this.#onStarted()
    } catch (error) {
      if (this.state.kind !== 'starting') return
      const attempt = this.state.attempt + 1
      this.state = { kind: 'starting', attempt, error: error as Error }
      for (const wake of this.#firstTold.splice(0)) wake()
      if (attempt === 1) {
        this.#log.warn(
          `${this.#who}: could not start yet (${(error as Error).message}): trying again every few seconds; deliveries are answered 503 until then.`,
        )
      }
      // pg-boss refuses a second start() of an instance whose start failed partway: stop it first.
      await this.#boss.stop({ graceful: false }).catch(() => {})
      this.#timer = setTimeout(() => void this.#try(), nextStartDelayMs(attempt))
      return
    }
    if ((this.state as BossState).kind === 'closed') {
      await this.#boss.stop({ graceful: false }).catch(() => {})
      return
    }
    this.state = { kind: 'started' }
    for (const wake of [...this.#waiters.splice(0), ...this.#firstTold.splice(0)]) wake()
  }

  /**
   * Resolves once the first start attempt has ended (started, or failed: then `notStarted()`
   * says why); at once when it has. A delivery that arrives while a queue just made is
   * starting waits for it, instead of being answered 503 for want of a moment.
   */
  firstAttempt(): Promise<void> {
    const { state } = this
    if (state.kind !== 'starting' || state.attempt > 0) return Promise.resolve()
    return new Promise((resolve) => this.#firstTold.push(resolve))
  }

  /** Resolves once started (never, if closed first). */
  started(): Promise<void> {
    if (this.state.kind === 'started') return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  /** Why it is not started, or undefined when it is. */
  notStarted(): Error | undefined {
    const { state } = this
    if (state.kind === 'started') return undefined
    if (state.kind === 'closed') return new Error(`${this.#who} is closed`)
    return new Error(
      `the queue has not started${state.error ? ` (${state.error.message})` : ' yet'}`,
    )
  }

  async close(graceful: boolean): Promise<void> {
    const was = this.state.kind
    this.state = { kind: 'closed' }
    clearTimeout(this.#timer)
    for (const wake of this.#firstTold.splice(0)) wake()
    if (was === 'started') await this.#boss.stop({ graceful })
  }
}

/** The checks the queue's and the worker's `health()` share: started (`name`), and PostgreSQL answering. */
export async function startedChecks(
  name: string,
  starter: BossStarter,
  pool: QueuePool,
  options?: HealthOptions,
) {
  const started = await runCheck(
    name,
    () => {
      const why = starter.notStarted()
      if (why !== undefined) throw new HealthProblem(why.message)
      return undefined
    },
    options?.timeoutMs,
  )
  const reached = await runCheck(
    'postgres',
    () => pool.query('SELECT 1').then(() => undefined),
    options?.timeoutMs,
  )
  return [started, reached]
}
