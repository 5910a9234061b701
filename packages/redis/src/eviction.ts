import type { Logger } from '@scheduling-kit/core'
import { consoleLogger } from '@scheduling-kit/core/store'
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
  const policy = await configGet(client, 'maxmemory-policy')
  return { policy, evicts: policy !== 'noeviction' }
}

/** What `checkPersistence` found. */
export interface Persistence {
  /** The server's `appendonly`, or `undefined` when it could not be read (CONFIG disabled). */
  appendonly: string | undefined
  /** Whether a restart keeps every acknowledged write (up to `appendfsync`'s second). */
  durable: boolean
}

async function configGet(client: RedisClient, name: string): Promise<string | undefined> {
  try {
    const answer = (await (client as { config(...args: string[]): Promise<unknown> }).config(
      'GET',
      name,
    )) as unknown
    const list = Array.isArray(answer) ? answer : []
    return typeof list[1] === 'string' ? list[1] : undefined
  } catch {
    return undefined
  }
}

/**
 * Reads whether the server keeps an append-only file. Without it a restart loses what was
 * written since the last snapshot, or everything: refreshed tokens (the old refresh token was
 * spent: the connection is lost) and queued deliveries already answered 200.
 */
export async function checkPersistence(client: RedisClient): Promise<Persistence> {
  const appendonly = await configGet(client, 'appendonly')
  return { appendonly, durable: appendonly === 'yes' }
}

/** Resolves once the client is connected (at once when it is), so CONFIG is not refused for it. */
function connected(client: RedisClient): Promise<void> {
  const status = (client as { status?: string }).status
  if (status === undefined || status === 'ready') return Promise.resolve()
  return new Promise((resolve) => client.once('ready', () => resolve()))
}

/**
 * Warns once per client, once it is connected, when the policy can evict (or cannot be read),
 * and when the server keeps no append-only file.
 */
export function warnIfEvicting(
  client: RedisClient,
  logger: Pick<Logger, 'warn'> | false | undefined,
): void {
  if (logger === false || checked.has(client)) return
  checked.add(client)
  const log = logger ?? consoleLogger
  connected(client)
    .then(() => Promise.all([checkEvictionPolicy(client), checkPersistence(client)]))
    .then(
      ([{ policy, evicts }, { appendonly, durable }]) => {
        if (evicts)
          log.warn(
            policy === undefined
              ? '@scheduling-kit/redis: could not read maxmemory-policy (CONFIG GET refused). Make sure it is noeviction: an evicted token record loses the connection.'
              : `@scheduling-kit/redis: maxmemory-policy is ${policy}. A full Redis will evict keys: token records (the connection is lost), leases (a second refresh) or dedupe claims (a delivery handled twice). Set maxmemory-policy noeviction.`,
          )
        if (!durable)
          log.warn(
            appendonly === undefined
              ? '@scheduling-kit/redis: could not read appendonly (CONFIG GET refused). Make sure it is yes, with appendfsync everysec or always: a restart without it loses refreshed tokens (the connection with them) and queued deliveries.'
              : '@scheduling-kit/redis: appendonly is no: this Redis keeps nothing on disk but snapshots, if those. A restart loses refreshed tokens written since (their old refresh token is spent: the connection is lost) and queued deliveries already answered 200. Set appendonly yes and appendfsync everysec (or always).',
          )
      },
      () => {},
    )
}
