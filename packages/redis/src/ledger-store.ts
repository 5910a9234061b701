import type {
  HealthOptions,
  HealthReport,
  LedgerEntry,
  LedgerFilter,
  LedgerPage,
  LedgerPurge,
  LedgerPurged,
  LedgerStore,
  ResourceMark,
  StoredLedgerEntry,
  StoredResourceMark,
} from '@scheduling-kit/core'
import { accountOfKey, markHorizonOf, maxBodiesOption } from '@scheduling-kit/core/store'
import { warnIfEvicting } from './eviction.js'
import { redisHealth } from './health.js'
import { LedgerKeys, type LedgerShard, storedKey } from './ledger-keys.js'
import { assemble, listLedger } from './ledger-list.js'
import { purgeLedger } from './ledger-purge.js'
import { shardsOption, warnIfUnspread } from './ledger-shards.js'
import entryWrite from './lua/ledger/entry-write.lua'
import hold from './lua/ledger/hold.lua'
import setMark from './lua/ledger/set-mark.lua'
import write from './lua/ledger/write.lua'
import writeAdvanceMark from './lua/ledger/write-advance-mark.lua'
import writeReadMark from './lua/ledger/write-read-mark.lua'
import { checkOptions, DEFAULT_PREFIX, type RedisStoreOptions, script } from './scripts.js'

// The ledger in Redis: its writes and marks here, its keys in ledger-keys.ts (shards by account,
// a hash tag each, spread over a Cluster's slots), listing in ledger-list.ts, retention in
// ledger-purge.ts.

export interface RedisLedgerStoreOptions extends RedisStoreOptions {
  /**
   * The most unexpired bodies one account keeps for replay. Past it, a new delivery of that
   * account is recorded and run as always, its body not kept (the entry says `bodyCapped`), so a
   * flood of one account cannot fill the server. Default 10 000.
   */
  maxBodiesPerAccount?: number
  /**
   * How many shards the ledger is split in, by account (1 to 256): each has its own hash tag,
   * chosen so the shards fall evenly over a Cluster's slots, and with them the ledger's load over
   * its masters. Default 64 on a Cluster, 1 on a single server (where shards gain nothing and a
   * listing of every account reads each). Fixed for a ledger's life: a ledger written with one
   * count is not read with another (give a new `prefix` to change it).
   */
  shards?: number
}

// One script per operation (./lua/ledger/, each with its keys and arguments in its header); the
// three writes share entry-write.lua, the compare-and-set of the entry and its indexes.
const WRITE = script(entryWrite, write)
const WRITE_READING_MARK = script(entryWrite, writeReadMark)
const WRITE_ADVANCING_MARK = script(entryWrite, writeAdvanceMark)
const HOLD = script(hold)
const SET_MARK = script(setMark)

/**
 * A `LedgerStore` in Redis: entries written by compare-and-set in one script each (one round
 * trip), listed newest first from sorted sets, bodies purged by expiry or by account.
 *
 * Keys: each shard's `<prefix>ledger:{<tag>}:e:<id>`, `...:m:<resource>`, and its indexes
 * `...:by-time`, `...:bodies`, `...:account:<key>`, `...:marks` (by horizon); one hash tag a
 * shard, an account's keys in one shard (`shards`: on a Cluster they spread over the masters).
 * Give it a server whose `maxmemory-policy` never evicts (`noeviction`), as every store here.
 *
 * @example
 * ```ts
 * const ledger = createDeliveryLedger({ store: new RedisLedgerStore({ client: new Redis(url) }) })
 * ```
 */
export class RedisLedgerStore implements LedgerStore {
  readonly #client: RedisStoreOptions['client']
  readonly #keys: LedgerKeys
  readonly #maxBodies: number

  constructor(options: RedisLedgerStoreOptions) {
    checkOptions('RedisLedgerStore', options)
    this.#maxBodies = maxBodiesOption('RedisLedgerStore', options.maxBodiesPerAccount)
    this.#client = options.client
    const prefix = options.prefix ?? DEFAULT_PREFIX
    this.#keys = new LedgerKeys(prefix, shardsOption(options, prefix))
    warnIfEvicting(this.#client, options.logger)
    warnIfUnspread(this.#client, this.#keys, prefix, options)
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#client, options)
  }

  async get(id: string): Promise<StoredLedgerEntry | undefined> {
    const [v, e, b, x, c] = await this.#client.hmget(
      this.#keys.of(id).entry(id),
      'v',
      'e',
      'b',
      'x',
      'c',
    )
    if (v === null || v === undefined || e === null || e === undefined) return undefined
    return assemble(v, e, b ?? '', x ?? '', c ?? '')
  }

  async write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined> {
    const version = await WRITE(
      this.#client,
      this.#entryKeys(this.#shardOf(entry), entry),
      this.#entryArgs(entry, expected),
    )
    return version === 0 ? undefined : Number(version)
  }

  async writeReadingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }> {
    const shard = this.#shardOf(entry)
    const answer = await WRITE_READING_MARK(
      this.#client,
      [...this.#entryKeys(shard, entry), this.#keys.of(resourceId).mark(resourceId)],
      this.#entryArgs(entry, expected),
    )
    if (!Array.isArray(answer)) return { version: undefined, mark: undefined }
    const [version, v, m] = answer as [number, string, string]
    return {
      version: Number(version),
      mark: m === '' ? undefined : { ...(JSON.parse(m) as ResourceMark), version: Number(v) },
    }
  }

  async writeAdvancingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    mark: ResourceMark,
  ): Promise<number | undefined> {
    const shard = this.#shardOf(entry)
    const marks = this.#keys.of(mark.resourceId)
    const version = await WRITE_ADVANCING_MARK(
      this.#client,
      [...this.#entryKeys(shard, entry), marks.mark(mark.resourceId), marks.marks],
      [...this.#entryArgs(entry, expected), ...markArgs(mark)],
    )
    return version === 0 ? undefined : Number(version)
  }

  /**
   * The shard an entry is written to: its id's, which must name the entry's account (as the
   * ledger's ids do), else a listing by account would look for it in another shard.
   */
  #shardOf(entry: LedgerEntry): LedgerShard {
    const shard = this.#keys.of(entry.id)
    if (
      entry.account !== undefined &&
      this.#keys.shards.length > 1 &&
      accountOfKey(entry.id) !== entry.account
    )
      throw new TypeError(
        "RedisLedgerStore: an entry's id must name its account (accountKey(account, payloadId)).",
      )
    return shard
  }

  /** entry-write.lua's keys: the entry, its shard's indexes, the account's. */
  #entryKeys(shard: LedgerShard, entry: LedgerEntry): string[] {
    return [
      shard.entry(entry.id),
      shard.byTime,
      shard.bodies,
      shard.account(entry.account ?? ''),
      shard.kept(entry.account ?? ''),
    ]
  }

  /** entry-write.lua's arguments. */
  #entryArgs(entry: LedgerEntry, expected: number | undefined): Array<string | number> {
    const { body, bodyExpiresAt, bodyCapped: _capped, ...rest } = entry
    return [
      JSON.stringify(rest),
      expected === undefined ? '' : String(expected),
      entry.receivedAt,
      storedKey(entry.id),
      body === undefined ? '' : body,
      body === undefined ? '' : (bodyExpiresAt ?? Number.MAX_SAFE_INTEGER),
      entry.status,
      entry.type,
      entry.account === undefined ? '' : storedKey(entry.account),
      this.#maxBodies,
    ]
  }

  /** Entries matching `filter`, newest first, one page at a time (ledger-list.ts). */
  list(filter?: LedgerFilter): Promise<LedgerPage> {
    return listLedger(this.#client, this.#keys, filter)
  }

  async mark(resourceId: string): Promise<StoredResourceMark | undefined> {
    const [v, m] = await this.#client.hmget(this.#keys.of(resourceId).mark(resourceId), 'v', 'm')
    if (v === null || v === undefined || m === null || m === undefined) return undefined
    return { ...(JSON.parse(m) as ResourceMark), version: Number(v) }
  }

  async setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined> {
    const shard = this.#keys.of(mark.resourceId)
    const version = await SET_MARK(
      this.#client,
      [shard.mark(mark.resourceId), shard.marks],
      [expected === undefined ? '' : String(expected), ...markArgs(mark)],
    )
    return version === 0 ? undefined : Number(version)
  }

  /** One script: takes, renews or releases a resource's hold (one round trip). */
  async holdResource(
    resourceId: string,
    owner: string,
    until: number,
    now: number,
  ): Promise<boolean> {
    return (
      Number(
        await HOLD(this.#client, [this.#keys.of(resourceId).hold(resourceId)], [owner, until, now]),
      ) === 1
    )
  }

  /** Drops what `what` says is over, in calls of at most 500 (ledger-purge.ts). */
  purge(what: LedgerPurge): Promise<LedgerPurged> {
    return purgeLedger(this.#client, this.#keys, what)
  }
}

/** A mark as the scripts take it: JSON, time, rank, delivery, horizon, resource. */
function markArgs(mark: ResourceMark): Array<string | number> {
  return [
    JSON.stringify(mark),
    mark.at,
    mark.rank,
    mark.by,
    markHorizonOf(mark),
    storedKey(mark.resourceId),
  ]
}
