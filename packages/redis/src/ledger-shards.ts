import { ConfigError, type Logger } from '@scheduling-kit/core'
import { consoleLogger } from '@scheduling-kit/core/store'
import { LedgerKeys, MAX_SHARDS } from './ledger-keys.js'
import type { RedisClient } from './scripts.js'

// How many shards a Redis ledger has: the option checked, its default (64 on a Cluster, 1 on a
// single server), and a warning when a Cluster's ledger written before shards would go unread.

/** The shards a Cluster's ledger has by default: 21 or 22 on each of 3 masters. */
export const CLUSTER_SHARDS = 64

const isCluster = (client: RedisClient) => (client as { isCluster?: boolean }).isCluster === true

/** The `shards` option checked, or its default for the client. */
export function shardsOption(
  options: { client: RedisClient; shards?: number | undefined },
  prefix: string,
): number {
  const { shards } = options
  if (shards === undefined)
    return isCluster(options.client) && !prefix.includes('{') ? CLUSTER_SHARDS : 1
  if (!Number.isSafeInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new ConfigError(`RedisLedgerStore: shards must be a whole number, 1 to ${MAX_SHARDS}.`)
  if (shards > 1 && prefix.includes('{'))
    throw new ConfigError(
      'RedisLedgerStore: a prefix with "{" sets its own hash tag, so shards cannot spread: give shards 1, or a prefix without braces.',
    )
  return shards
}

/**
 * On a Cluster, with shards by default: warns once when the prefix holds a ledger written in one
 * shard (by an earlier version), which the shards do not read.
 */
export function warnIfUnspread(
  client: RedisClient,
  keys: LedgerKeys,
  prefix: string,
  options: { shards?: number | undefined; logger?: Pick<Logger, 'warn'> | false | undefined },
): void {
  if (options.logger === false || options.shards !== undefined || keys.shards.length === 1) return
  const log = options.logger ?? consoleLogger
  const [single] = new LedgerKeys(prefix, 1).shards
  client.exists(single!.byTime).then(
    (found) => {
      if (found === 1)
        log.warn(
          `@scheduling-kit/redis: the ledger under "${prefix}" was written in one shard; it is now read in ${keys.shards.length}, so its entries go unread. Give RedisLedgerStore shards: 1 to keep it, or a new prefix.`,
        )
    },
    () => {},
  )
}
