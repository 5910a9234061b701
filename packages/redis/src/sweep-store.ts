import type { SweepCheckpoint, SweepStore } from '@scheduling-kit/core'
import releaseLease from './lua/lease/release.lua'
import setCheckpoint from './lua/sweep/checkpoint.lua'
import {
  checkOptions,
  DEFAULT_PREFIX,
  type RedisClient,
  type RedisStoreOptions,
  script,
  takeLease,
} from './scripts.js'

const SET_CHECKPOINT = script(setCheckpoint)
const RELEASE_LEASE = script(releaseLease)

/**
 * A `SweepStore` in Redis, shared by every instance: a shard's lease at
 * `<prefix>sweep-lease:{<shard>}` (`SET NX PX`) and its checkpoint at
 * `<prefix>sweep:{<shard>}` (a hash moved by compare-and-set in one script). Each shard has its
 * own hash tag, so on a Cluster the shards spread over the masters.
 *
 * @example
 * ```ts
 * const subscriptions = createWebhookSubscriptions({
 *   ...options,
 *   sweep: { store: new RedisSweepStore({ client: redis }), ledger },
 * })
 * ```
 */
export class RedisSweepStore implements SweepStore {
  readonly #client: RedisClient
  readonly #prefix: string

  constructor(options: RedisStoreOptions) {
    checkOptions('RedisSweepStore', options)
    this.#client = options.client
    this.#prefix = options.prefix ?? DEFAULT_PREFIX
  }

  #lease = (name: string) => `${this.#prefix}sweep-lease:{${name}}`
  #checkpoint = (name: string) => `${this.#prefix}sweep:{${name}}`

  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return takeLease(this.#client, this.#lease(name), owner, ttlMs)
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await RELEASE_LEASE(this.#client, [this.#lease(name)], [owner])
  }

  async checkpoint(name: string): Promise<SweepCheckpoint | undefined> {
    const [through, version] = await this.#client.hmget(
      this.#checkpoint(name),
      'through',
      'version',
    )
    if (through == null || version == null) return undefined
    return { through: Number(through), version: Number(version) }
  }

  async setCheckpoint(
    name: string,
    through: number,
    expected: number | undefined,
  ): Promise<number | undefined> {
    const moved = await SET_CHECKPOINT(
      this.#client,
      [this.#checkpoint(name)],
      [through, expected === undefined ? '' : String(expected)],
    )
    return moved === null || moved === undefined ? undefined : Number(moved)
  }
}
