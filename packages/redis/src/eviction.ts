import type { RedisClient } from './scripts.js'

const checked = new WeakSet<object>()

/** What `checkEvictionPolicy` found. */
export interface EvictionPolicy {
  /** The server's `maxmemory-policy`, or `undefined` when it could not be read (CONFIG disabled). */
  policy: string | undefined
  /** Whether the policy can drop keys the stores rely on. */
  evicts: boolean
}

/**
 * Reads the server's `maxmemory-policy`. Under any policy but `noeviction`, a full Redis drops
 * keys: under `allkeys-*` token records (a lost record is a lost connection), under
 * `volatile-*` leases and dedupe claims (a second refresh, a delivery handled twice).
 */
export async function checkEvictionPolicy(client: RedisClient): Promise<EvictionPolicy> {
  let policy: string | undefined
  try {
    const answer = (await (client as { config(...args: string[]): Promise<unknown> }).config(
      'GET',
      'maxmemory-policy',
    )) as unknown
    const list = Array.isArray(answer) ? answer : []
    policy = typeof list[1] === 'string' ? list[1] : undefined
  } catch {
    policy = undefined
  }
  return { policy, evicts: policy !== 'noeviction' }
}

/** Warns once per client, at start-up, when the policy can evict (or cannot be read). */
export function warnIfEvicting(
  client: RedisClient,
  logger: { warn(message: string): void } | false | undefined,
): void {
  if (logger === false || checked.has(client)) return
  checked.add(client)
  const log = logger ?? console
  checkEvictionPolicy(client).then(
    ({ policy, evicts }) => {
      if (!evicts) return
      log.warn(
        policy === undefined
          ? '@scheduling-kit/redis: could not read maxmemory-policy (CONFIG GET refused). Make sure it is noeviction: an evicted token record loses the connection.'
          : `@scheduling-kit/redis: maxmemory-policy is ${policy}. A full Redis will evict keys: token records (the connection is lost), leases (a second refresh) or dedupe claims (a delivery handled twice). Set maxmemory-policy noeviction.`,
      )
    },
    () => {},
  )
}
