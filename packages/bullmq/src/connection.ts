import { ConfigError } from '@scheduling-kit/core'
import { Redis, type RedisOptions } from 'ioredis'

/** Where Redis is: ioredis options (`{ host, port }`, `{ url }`... ) or a client of yours. */
export type ConnectionInput = (RedisOptions & { url?: string }) | Redis

function isClient(value: unknown): value is Redis {
  return typeof (value as Redis | undefined)?.duplicate === 'function'
}

/**
 * A client of the package's own, with the settings a role needs: the caller's client is
 * duplicated (its own settings kept, the role's on top), options get a new client.
 */
export function ownClient(who: string, connection: ConnectionInput, settings: RedisOptions): Redis {
  if (connection === null || typeof connection !== 'object') {
    throw new ConfigError(
      `${who}: pass { connection }: ioredis options ({ host, port }) or an ioredis client.`,
    )
  }
  if (isClient(connection)) return connection.duplicate(settings)
  const { url, ...rest } = connection
  return url === undefined
    ? new Redis({ ...rest, ...settings })
    : new Redis(url, { ...rest, ...settings })
}
