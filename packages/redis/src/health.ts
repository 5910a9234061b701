import type { HealthOptions, HealthReport } from '@scheduling-kit/core'
import { HealthProblem, healthReport, runCheck } from '@scheduling-kit/core/adapter'
import type { RedisClient } from './scripts.js'

/**
 * A Redis store's `health()`: the client is connected and the server answers `PING`. A client
 * that is not (reconnecting, closed) says so at once rather than wait in its offline queue.
 */
export async function redisHealth(
  client: RedisClient,
  options?: HealthOptions,
): Promise<HealthReport> {
  const check = await runCheck(
    'redis',
    async () => {
      if (client.status !== 'ready') throw new HealthProblem(`not connected (${client.status})`)
      const answer = await client.ping()
      if (answer !== 'PONG') throw new HealthProblem('PING was not answered PONG')
      return undefined
    },
    options?.timeoutMs,
  )
  return healthReport([check])
}
