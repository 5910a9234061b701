import type { HealthOptions, HealthReport } from '@scheduling-kit/core'
import { HealthProblem, healthReport, runCheck } from '@scheduling-kit/core/store'
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
      let answer: unknown
      try {
        answer = await client.ping()
      } catch (error) {
        // Closed or dropped while asked: its state says more than ioredis's message.
        if (client.status !== 'ready') throw new HealthProblem(`not connected (${client.status})`)
        throw error
      }
      if (answer !== 'PONG') throw new HealthProblem('PING was not answered PONG')
      return undefined
    },
    options?.timeoutMs,
  )
  return healthReport([check])
}
