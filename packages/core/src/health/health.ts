// Readiness: what a handler, a store or a queue says of what it depends on, for an app's
// readiness route. A check answers within its time-out or is counted failed; its detail is a
// code or a sentence of this package's own, never a driver's message (which may name a user,
// a host or worse).

import { isSchedulingError } from '../errors/errors.js'
import {
  type HealthCheck,
  type HealthChecked,
  type HealthOptions,
  type HealthReport,
  healthReport,
} from './report.js'

export const DEFAULT_HEALTH_TIMEOUT_MS = 2_000

/** What a check throws to say, in its own words, what is wrong (`not connected (reconnecting)`). */
export class HealthProblem extends Error {
  override name = 'HealthProblem'
}

/** What a failed check says: a scheduling-kit message, else the error's code or class. */
export function healthDetail(error: unknown): string {
  if (isSchedulingError(error) || error instanceof HealthProblem) return error.message
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'string' && /^[\w.-]{1,40}$/.test(code)) return code
  if (error instanceof Error && /^[A-Za-z_$][\w$]{0,63}$/.test(error.name)) return error.name
  return 'failed'
}

/**
 * Runs one check within `timeoutMs`: `probe` resolves to a note when all is well, or throws
 * what is wrong (see `healthDetail`).
 */
export async function runCheck(
  name: string,
  probe: () => Promise<string | undefined> | string | undefined,
  timeoutMs = DEFAULT_HEALTH_TIMEOUT_MS,
): Promise<HealthCheck> {
  const started = performance.now()
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LateCheck(timeoutMs)), timeoutMs)
  })
  try {
    const note = await Promise.race([Promise.resolve().then(probe), late])
    const check: HealthCheck = { name, ok: true, ms: Math.round(performance.now() - started) }
    if (note !== undefined) check.detail = note
    return check
  } catch (error) {
    return {
      name,
      ok: false,
      ms: Math.round(performance.now() - started),
      detail: error instanceof LateCheck ? error.message : healthDetail(error),
    }
  } finally {
    clearTimeout(timer)
  }
}

class LateCheck extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`)
  }
}

/**
 * Asks each component for its health, at once, and puts the answers together: each check's
 * name starts with the component's (`tokens.redis`). A component without `health()` is left
 * out; one that throws, or takes longer than `timeoutMs`, is a failed check. Each component
 * is given 80% of the time for its own checks, so one of them that hangs is named.
 *
 * @example
 * ```ts
 * app.get('/ready', async (_req, res) => {
 *   const report = await checkHealth({ webhooks: webhooks.handler, tokens: tokenStore, queue })
 *   res.status(report.ok ? 200 : 503).json(report)
 * })
 * ```
 */
export async function checkHealth(
  components: Record<string, Partial<HealthChecked> | undefined>,
  options: HealthOptions = {},
): Promise<HealthReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_HEALTH_TIMEOUT_MS
  const parts = await Promise.all(
    Object.entries(components).map(async ([name, component]): Promise<HealthCheck[]> => {
      if (typeof component?.health !== 'function') return []
      let report: HealthReport | undefined
      // The component's own checks get less time than this one: theirs end first, and say which.
      const inner = Math.max(1, Math.floor(timeoutMs * 0.8))
      const check = await runCheck(
        name,
        async () => {
          report = await component.health!({ timeoutMs: inner })
          return undefined
        },
        timeoutMs,
      )
      if (report === undefined || !Array.isArray(report.checks)) return [check]
      return report.checks.map((inner) => ({ ...inner, name: `${name}.${inner.name}` }))
    }),
  )
  return healthReport(parts.flat())
}
