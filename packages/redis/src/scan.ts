import { IncompleteScanError } from '@scheduling-kit/core'
import type { Cluster, Redis } from 'ioredis'

/** The user's ioredis client: a `Redis` or a `Cluster` (keys of one record share a hash slot). */
export type RedisClient = Redis | Cluster

// Scanning every key under a prefix, on one server or on every master of a Cluster, covering
// every slot or saying it could not.

/** A glob's special characters escaped, for `SCAN MATCH`. */
export const globEscaped = (text: string) => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`)

/** The slots a Redis Cluster has, 0 to 16383. */
const SLOTS = 16_384

/** Which master serves each slot range, as `CLUSTER SLOTS` answers it: `host:port` by range. */
type SlotMap = { from: number; to: number; master: string }[]

/** The cluster's slot map, asked of the first node that answers; sorted by range. */
async function slotMap(cluster: Cluster): Promise<SlotMap> {
  let lastError: unknown
  for (const node of cluster.nodes()) {
    try {
      const ranges = (await node.cluster('SLOTS')) as unknown as [
        number,
        number,
        [string, number],
      ][]
      return ranges
        .map(([from, to, [host, port]]) => ({ from, to, master: `${host}:${port}` }))
        .sort((a, b) => a.from - b.from)
    } catch (error) {
      lastError = error
    }
  }
  throw new IncompleteScanError('Redis Cluster scan', 'no node answered CLUSTER SLOTS', {
    cause: lastError,
  })
}

/** Whether the ranges cover every slot, once each. */
function coversEverySlot(map: SlotMap): boolean {
  let next = 0
  for (const { from, to } of map) {
    if (from !== next) return false
    next = to + 1
  }
  return next === SLOTS
}

const sameMap = (a: SlotMap, b: SlotMap) =>
  a.length === b.length &&
  a.every((r, i) => r.from === b[i]!.from && r.to === b[i]!.to && r.master === b[i]!.master)

/** The longest a scan waits for the client to learn the topology again. */
const REFRESH_WAIT_MS = 5_000

/**
 * The client asked to learn the cluster's topology again (`CLUSTER SLOTS`): a client made before
 * a failover keeps the roles it last knew, and a scan must not depend on the client having
 * noticed by itself. Waits at most `REFRESH_WAIT_MS`; a refresh that fails leaves the old map.
 */
function relearn(cluster: Cluster): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, REFRESH_WAIT_MS)
    cluster.refreshSlotsCache(() => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/**
 * The client's connection to `host:port`, whatever role the client last knew it in (a replica
 * promoted by a failover is a master the client may still call a replica); after the client
 * learnt the topology again when it has none.
 */
async function nodeAt(cluster: Cluster, address: string): Promise<Redis | undefined> {
  const find = () =>
    cluster.nodes('all').find((n) => `${n.options.host}:${n.options.port}` === address)
  const found = find()
  if (found !== undefined) return found
  await relearn(cluster)
  return find()
}

/** How long a Cluster scan waits before each new attempt when the topology moved: a failover takes this long. */
const RESCAN_PAUSES_MS = [250, 1_000, 2_000, 4_000]

/**
 * Every key starting with `start`, page by page, on every master of a Cluster. On a Cluster the
 * slot map is read before and after: each range's master is scanned, and the scan counts only
 * if every slot had a master that answered and the map did not change meanwhile (a failover);
 * else the whole scan runs again on the new map, a few times, then `IncompleteScanError`. A
 * key SCAN gives twice (it may, and a scan run again does) is given twice: callers that must
 * not repeat themselves check.
 */
export async function* scanKeys(
  client: RedisClient,
  start: string,
): AsyncIterable<{ node: Redis; keys: string[] }> {
  const match = `${globEscaped(start)}*`
  if (!isCluster(client)) {
    yield* scanNode(client, match)
    return
  }
  let why = ''
  let cause: unknown
  for (let attempt = 0; attempt <= RESCAN_PAUSES_MS.length; attempt++) {
    if (attempt > 0) {
      await new Promise((r) => setTimeout(r, RESCAN_PAUSES_MS[attempt - 1]))
      await relearn(client)
    }
    const before = await slotMap(client).catch((error: unknown) => {
      cause = error
      return undefined
    })
    if (before === undefined || !coversEverySlot(before)) {
      why = 'some slots have no master'
      continue
    }
    let whole = true
    for (const master of new Set(before.map((r) => r.master))) {
      const node = await nodeAt(client, master)
      if (node === undefined) {
        whole = false
        why = `the master ${master} is not known to the client`
        break
      }
      try {
        yield* scanNode(node, match)
      } catch (error) {
        whole = false
        cause = error
        why = `the master ${master} did not answer`
        break
      }
    }
    if (!whole) continue
    const after = await slotMap(client).catch(() => undefined)
    if (after !== undefined && sameMap(before, after)) return
    why = 'the slot map changed during the scan (a failover)'
  }
  throw new IncompleteScanError(`Scanning ${start}* on the Redis Cluster`, why, { cause })
}

/**
 * A read of a scan (a key the scan gave): on a Cluster, tried again after each of the rescan
 * pauses while a failover settles (`CLUSTERDOWN`, a closed connection, redirections run out);
 * then `IncompleteScanError`. Elsewhere, as it is.
 */
export async function scanRead<T>(client: RedisClient, read: () => Promise<T>): Promise<T> {
  if (!isCluster(client)) return read()
  for (let attempt = 0; ; attempt++) {
    try {
      return await read()
    } catch (error) {
      if (attempt >= RESCAN_PAUSES_MS.length)
        throw new IncompleteScanError('A Redis Cluster scan', 'a record could not be read', {
          cause: error,
        })
      await new Promise((r) => setTimeout(r, RESCAN_PAUSES_MS[attempt]))
      await relearn(client)
    }
  }
}

export const isCluster = (client: RedisClient): client is Cluster =>
  'nodes' in client && typeof client.nodes === 'function'

async function* scanNode(
  node: Redis,
  match: string,
): AsyncIterable<{ node: Redis; keys: string[] }> {
  let cursor = '0'
  do {
    const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 500)
    cursor = next
    if (keys.length > 0) yield { node, keys }
  } while (cursor !== '0')
}
