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
import { markHorizonOf, maxBodiesOption } from '@scheduling-kit/core/store'
import { warnIfEvicting } from './eviction.js'
import { redisHealth } from './health.js'
import { LedgerKeys } from './ledger-keys.js'
import { assemble, listLedger } from './ledger-list.js'
import { purgeLedger } from './ledger-purge.js'
import entryWrite from './lua/ledger/entry-write.lua'
import hold from './lua/ledger/hold.lua'
import setMark from './lua/ledger/set-mark.lua'
import write from './lua/ledger/write.lua'
import writeAdvanceMark from './lua/ledger/write-advance-mark.lua'
import writeReadMark from './lua/ledger/write-read-mark.lua'
import { checkOptions, DEFAULT_PREFIX, type RedisStoreOptions, script } from './scripts.js'

// The ledger in Redis: its writes and marks here, its keys in ledger-keys.ts (one hash tag: one
// Cluster slot, the ledger's writes go to one master), listing in ledger-list.ts, retention in
// ledger-purge.ts.

export interface RedisLedgerStoreOptions extends RedisStoreOptions {
  /**
   * The most unexpired bodies one account keeps for replay. Past it, a new delivery of that
   * account is recorded and run as always, its body not kept (the entry says `bodyCapped`), so a
   * flood of one account cannot fill the server. Default 10 000.
   */
  maxBodiesPerAccount?: number
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
 * trip), listed newest first from a sorted set, bodies purged by expiry or by account.
 *
 * Keys: `<prefix>ledger:{<prefix>}:e:<id>`, `...:m:<resource>`, and the indexes `...:by-time`,
 * `...:bodies`, `...:account:<key>`, `...:marks` (by horizon); one hash tag, one Cluster slot. Give it a server whose
 * `maxmemory-policy` never evicts (`noeviction`), as every store here.
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
    this.#keys = new LedgerKeys(options.prefix ?? DEFAULT_PREFIX)
    warnIfEvicting(this.#client, options.logger)
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#client, options)
  }

  async get(id: string): Promise<StoredLedgerEntry | undefined> {
    const [v, e, b, x, c] = await this.#client.hmget(this.#keys.entry(id), 'v', 'e', 'b', 'x', 'c')
    if (v === null || v === undefined || e === null || e === undefined) return undefined
    return assemble(v, e, b ?? '', x ?? '', c ?? '')
  }

  async write(entry: LedgerEntry, expected: number | undefined): Promise<number | undefined> {
    const version = await WRITE(
      this.#client,
      this.#entryKeys(entry),
      this.#entryArgs(entry, expected),
    )
    return version === 0 ? undefined : Number(version)
  }

  async writeReadingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }> {
    const answer = await WRITE_READING_MARK(
      this.#client,
      [...this.#entryKeys(entry), this.#keys.mark(resourceId)],
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
    const version = await WRITE_ADVANCING_MARK(
      this.#client,
      [...this.#entryKeys(entry), this.#keys.mark(mark.resourceId), this.#keys.marks],
      [...this.#entryArgs(entry, expected), ...markArgs(mark)],
    )
    return version === 0 ? undefined : Number(version)
  }

  /** entry-write.lua's keys: the entry, its indexes, the account's kept bodies. */
  #entryKeys(entry: LedgerEntry): string[] {
    return [
      this.#keys.entry(entry.id),
      this.#keys.byTime,
      this.#keys.bodies,
      this.#keys.account(entry.account ?? ''),
      this.#keys.kept(entry.account ?? ''),
    ]
  }

  /** entry-write.lua's arguments. */
  #entryArgs(entry: LedgerEntry, expected: number | undefined): Array<string | number> {
    const { body, bodyExpiresAt, bodyCapped: _capped, ...rest } = entry
    return [
      JSON.stringify(rest),
      expected === undefined ? '' : String(expected),
      entry.receivedAt,
      entry.id,
      body === undefined ? '' : body,
      body === undefined ? '' : (bodyExpiresAt ?? Number.MAX_SAFE_INTEGER),
      entry.status,
      entry.type,
      entry.account ?? '',
      this.#maxBodies,
    ]
  }

  /** Entries matching `filter`, newest first, one page at a time (ledger-list.ts). */
  list(filter?: LedgerFilter): Promise<LedgerPage> {
    return listLedger(this.#client, this.#keys, filter)
  }

  async mark(resourceId: string): Promise<StoredResourceMark | undefined> {
    const [v, m] = await this.#client.hmget(this.#keys.mark(resourceId), 'v', 'm')
    if (v === null || v === undefined || m === null || m === undefined) return undefined
    return { ...(JSON.parse(m) as ResourceMark), version: Number(v) }
  }

  async setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined> {
    const version = await SET_MARK(
      this.#client,
      [this.#keys.mark(mark.resourceId), this.#keys.marks],
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
      Number(await HOLD(this.#client, [this.#keys.hold(resourceId)], [owner, until, now])) === 1
    )
  }

  /** Drops what `what` says is over, in calls of at most 500 (ledger-purge.ts). */
  purge(what: LedgerPurge): Promise<LedgerPurged> {
    return purgeLedger(this.#client, this.#keys, what)
  }
}

/** A mark as the scripts take it: JSON, time, rank, delivery, horizon, resource. */
function markArgs(mark: ResourceMark): Array<string | number> {
  return [JSON.stringify(mark), mark.at, mark.rank, mark.by, markHorizonOf(mark), mark.resourceId]
}
