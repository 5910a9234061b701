import { createHash } from 'node:crypto'
import {
  ConfigError,
  type CredentialError,
  isSchedulingError,
  type Logger,
  type ReencryptResult,
} from '@scheduling-kit/core'
import { encodeStoreKey, type RecordSealer } from '@scheduling-kit/core/store'
import extendLease from './lua/lease/extend.lua'
import releaseLease from './lua/lease/release.lua'
import replaceSealed from './lua/sealed/replace.lua'
import { type RedisClient, scanKeys, scanRead } from './scan.js'

export type { RedisClient }

/**
 * A Lua script (./lua/, one operation each, its keys and arguments in its header) run by its
 * SHA-1 (`EVALSHA`), loaded with `EVAL` the first time a server lacks it.
 */
export type Script = (
  client: RedisClient,
  keys: readonly string[],
  args: ReadonlyArray<string | number>,
) => Promise<unknown>

/** A script of `parts` (./lua/: a shared fragment first, then the operation), joined. */
export function script(...parts: string[]): Script {
  const lua = parts.join('\n')
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
   * the console; `false` skips the check.
   */
  logger?: Pick<Logger, 'warn'> | false
}

export const DEFAULT_PREFIX = 'scheduling-kit:'

export function checkOptions(name: string, options: RedisStoreOptions): void {
  const client = options?.client as { evalsha?: unknown } | undefined
  if (typeof client?.evalsha !== 'function') {
    throw new ConfigError(`${name}: pass { client }, an ioredis client (new Redis(url)).`)
  }
  if (options.prefix !== undefined && typeof options.prefix !== 'string') {
    throw new ConfigError(`${name}: prefix must be a string.`)
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

const EXTEND_LEASE = script(extendLease)

/** Deletes a key when it holds a value: a lease released by its owner only, an index entry by its record only. */
export const RELEASE_LEASE = script(releaseLease)

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

const REPLACE_SEALED = script(replaceSealed)

/**
 * `reencrypt()` of a store of sealed records: each record under `start` not sealed with the
 * current key is opened and sealed again in place, unless a write changed it meanwhile.
 * `keyOf` gives a record's store key from its Redis key and hash.
 */
export async function reencryptRecords<T>(
  client: RedisClient,
  start: string,
  sealer: RecordSealer<T>,
  keyOf: (redisKey: string) => Promise<string | undefined>,
): Promise<ReencryptResult> {
  const result: ReencryptResult = { scanned: 0, rewritten: 0, skipped: 0, failed: [] }
  if (!sealer.sealing) return result
  // A key given again (SCAN may; a Cluster scan run again after a failover does) counts once.
  const seen = new Set<string>()
  for await (const { keys } of scanKeys(client, start)) {
    for (const redisKey of keys) {
      if (seen.has(redisKey)) continue
      seen.add(redisKey)
      // Through the client, not the node the scan ran on: a failover may have moved the slot.
      const stored = await scanRead(client, () => client.hget(redisKey, 'r'))
      if (stored === null) continue
      result.scanned++
      if (!sealer.stale(stored)) continue
      const key = await scanRead(client, () => keyOf(redisKey))
      if (key === undefined) {
        result.skipped++
        continue
      }
      let resealed: string
      try {
        resealed = await sealer.write(key, await sealer.read(key, stored))
      } catch (error) {
        if (!isSchedulingError(error) || !error.code.startsWith('credential_')) throw error
        result.failed.push(error as CredentialError)
        continue
      }
      const replaced = await scanRead(client, () =>
        REPLACE_SEALED(client, [redisKey], [stored, resealed]),
      )
      if (replaced === 1) result.rewritten++
      else result.skipped++
    }
  }
  return result
}
