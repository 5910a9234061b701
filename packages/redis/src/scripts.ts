import { createHash } from 'node:crypto'
import { encodeStoreKey } from '@scheduling-kit/core/adapter'
import type { Cluster, Redis } from 'ioredis'

/** The user's ioredis client: a `Redis` or a `Cluster` (keys of one record share a hash slot). */
export type RedisClient = Redis | Cluster

/** A Lua script run by its SHA-1 (`EVALSHA`), loaded with `EVAL` the first time a server lacks it. */
export type Script = (
  client: RedisClient,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
) => Promise<unknown>

export function script(lua: string): Script {
  const sha = createHash('sha1').update(lua).digest('hex')
  return async (client, keys, args) => {
    try {
      return await client.evalsha(sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
      return await client.eval(lua, keys.length, ...keys, ...args)
    }
  }
}

/** Where the store writes: everything under `prefix`. Default `scheduling-kit:`. */
export interface RedisStoreOptions {
  /** Your ioredis client (`new Redis(url)`), shared with the rest of the app if you like. */
  client: RedisClient
  /** Prefix of every key the store writes. Default `scheduling-kit:`. */
  prefix?: string
  /**
   * Told once per client when the server's `maxmemory-policy` can evict keys. Default
   * `console`; `false` skips the check.
   */
  logger?: { warn(message: string): void } | false
}

export const DEFAULT_PREFIX = 'scheduling-kit:'

export function checkOptions(name: string, options: RedisStoreOptions): void {
  const client = options?.client as { evalsha?: unknown } | undefined
  if (typeof client?.evalsha !== 'function') {
    throw new TypeError(`${name}: pass { client }, an ioredis client (new Redis(url)).`)
  }
  if (options.prefix !== undefined && typeof options.prefix !== 'string') {
    throw new TypeError(`${name}: prefix must be a string.`)
  }
}

/**
 * A key inside a hash tag, `{<key>}`, so every Redis key of one record lands in one Cluster
 * slot, whatever the key holds: lossless (`encodeStoreKey`), and escaped when it starts with
 * `}` (which would end the tag at once, empty, and hash each Redis key on its own).
 */
export function hashTagged(key: string): string {
  return `{${encodeStoreKey(key, (k) => k.startsWith('}'))}}`
}

// Taken with SET NX PX first; this only extends a lease its owner already holds.
const EXTEND_LEASE = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

/** Deletes a key when it holds `ARGV[1]`: a lease released by its owner only, an index entry by its record only. */
export const RELEASE_LEASE = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`)

/** Takes the lease at `leaseKey` for `owner`, or extends it when `owner` holds it already. */
export async function takeLease(
  client: RedisClient,
  leaseKey: string,
  owner: string,
  ttlMs: number,
): Promise<boolean> {
  const ms = Math.max(1, Math.ceil(ttlMs))
  if ((await client.set(leaseKey, owner, 'PX', ms, 'NX')) === 'OK') return true
  return (await EXTEND_LEASE(client, [leaseKey], [owner, ms])) === 1
}
