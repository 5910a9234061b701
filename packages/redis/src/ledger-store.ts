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
import {
  encodeStoreKey,
  ledgerPageSize,
  ledgerTimeOf,
  markHorizonOf,
  maxBodiesOption,
  readLedgerCursor,
} from '@scheduling-kit/core/store'
import { warnIfEvicting } from './eviction.js'
import { redisHealth } from './health.js'
import entryWrite from './lua/ledger/entry-write.lua'
import hold from './lua/ledger/hold.lua'
import list from './lua/ledger/list.lua'
import purgeAccountBodies from './lua/ledger/purge-account-bodies.lua'
import purgeBodies from './lua/ledger/purge-bodies.lua'
import purgeEntries from './lua/ledger/purge-entries.lua'
import purgeMarks from './lua/ledger/purge-marks.lua'
import setMark from './lua/ledger/set-mark.lua'
import write from './lua/ledger/write.lua'
import writeAdvanceMark from './lua/ledger/write-advance-mark.lua'
import writeReadMark from './lua/ledger/write-read-mark.lua'
import { checkOptions, DEFAULT_PREFIX, type RedisStoreOptions, script } from './scripts.js'

// The ledger in Redis. Every key of one ledger shares one hash tag, so each write and the
// indexes it moves are one atomic script, one round trip, on a single server and on a Cluster
// alike (one slot: the ledger's writes go to one master).
//
// An entry is a hash: `v` its version, `e` the entry as JSON without its body, `b` the body,
// `x` when the body expires, `s` status, `t` type, `r` first recorded, `a` account. Sorted sets
// index entries by first recording (all, and per account) and bodies by expiry.

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
const LIST = script(list)
const HOLD = script(hold)
const SET_MARK = script(setMark)
const PURGE_MARKS = script(purgeMarks)
const PURGE_ENTRIES = script(purgeEntries)
const PURGE_BODIES = script(purgeBodies)
const PURGE_ACCOUNT_BODIES = script(purgeAccountBodies)

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
  readonly #base: string
  readonly #maxBodies: number

  constructor(options: RedisLedgerStoreOptions) {
    checkOptions('RedisLedgerStore', options)
    this.#maxBodies = maxBodiesOption('RedisLedgerStore', options.maxBodiesPerAccount)
    this.#client = options.client
    const prefix = options.prefix ?? DEFAULT_PREFIX
    // The tag is the prefix itself (encoded: no brace can end it early).
    this.#base = `${prefix}ledger:{${encodeStoreKey(prefix, (k) => k.includes('}'))}}:`
    warnIfEvicting(this.#client, options.logger)
  }

  #entry(id: string): string {
    return `${this.#base}e:${id}`
  }

  #account(account: string): string {
    return `${this.#base}account:${account}`
  }

  /** Whether Redis answers (`PING`), for a readiness route: see `checkHealth`. */
  health(options?: HealthOptions): Promise<HealthReport> {
    return redisHealth(this.#client, options)
  }

  async get(id: string): Promise<StoredLedgerEntry | undefined> {
    const [v, e, b, x, c] = await this.#client.hmget(this.#entry(id), 'v', 'e', 'b', 'x', 'c')
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
      [...this.#entryKeys(entry), `${this.#base}m:${resourceId}`],
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
      [...this.#entryKeys(entry), `${this.#base}m:${mark.resourceId}`, `${this.#base}marks`],
      [
        ...this.#entryArgs(entry, expected),
        JSON.stringify(mark),
        mark.at,
        mark.rank,
        mark.by,
        markHorizonOf(mark),
        mark.resourceId,
      ],
    )
    return version === 0 ? undefined : Number(version)
  }

  /** entry-write.lua's keys: the entry, its indexes, the account's kept bodies. */
  #entryKeys(entry: LedgerEntry): string[] {
    return [
      this.#entry(entry.id),
      `${this.#base}by-time`,
      `${this.#base}bodies`,
      this.#account(entry.account ?? ''),
      `${this.#base}kept:${entry.account ?? ''}`,
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

  async list(filter: LedgerFilter = {}): Promise<LedgerPage> {
    const limit = ledgerPageSize(filter)
    const cursor = readLedgerCursor(filter.after)
    const statuses =
      filter.status === undefined
        ? []
        : typeof filter.status === 'string'
          ? [filter.status]
          : [...filter.status]
    const since = ledgerTimeOf(filter.since)
    const until = ledgerTimeOf(filter.until)
    const index =
      filter.account === undefined ? `${this.#base}by-time` : this.#account(filter.account)
    const [rows, more, lastScore, lastId] = (await LIST(
      this.#client,
      [index],
      [
        `${this.#base}e:`,
        cursor === undefined ? '' : cursor.at,
        cursor === undefined ? '' : cursor.id,
        since === undefined ? '-inf' : since,
        until === undefined ? '' : until,
        limit,
        statuses.join(','),
        filter.status !== undefined && statuses.length === 0 ? '1' : '0',
        filter.type ?? '',
      ],
    )) as [[string, string, string, string, string][], number, string, string]
    const entries = rows.map(([v, e, b, x, c]) => assemble(v, e, b, x, c))
    const page: LedgerPage = { entries }
    if (Number(more) === 1) {
      // A full page continues after its last entry; a short one after the last it walked.
      const last = entries.length === limit ? entries[entries.length - 1]! : undefined
      page.next = last === undefined ? `${lastScore}.${lastId}` : `${last.receivedAt}.${last.id}`
    }
    return page
  }

  async mark(resourceId: string): Promise<StoredResourceMark | undefined> {
    const [v, m] = await this.#client.hmget(`${this.#base}m:${resourceId}`, 'v', 'm')
    if (v === null || v === undefined || m === null || m === undefined) return undefined
    return { ...(JSON.parse(m) as ResourceMark), version: Number(v) }
  }

  async setMark(mark: ResourceMark, expected: number | undefined): Promise<number | undefined> {
    const version = await SET_MARK(
      this.#client,
      [`${this.#base}m:${mark.resourceId}`, `${this.#base}marks`],
      [
        JSON.stringify(mark),
        expected === undefined ? '' : String(expected),
        mark.at,
        mark.rank,
        mark.by,
        markHorizonOf(mark),
        mark.resourceId,
      ],
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
      Number(await HOLD(this.#client, [`${this.#base}h:${resourceId}`], [owner, until, now])) === 1
    )
  }

  async purge(what: LedgerPurge): Promise<LedgerPurged> {
    let bodies = 0
    let entries = 0
    let marks = 0
    if (what.marksBefore !== undefined)
      for (;;) {
        const [dropped] = (await PURGE_MARKS(
          this.#client,
          [`${this.#base}marks`],
          [`${this.#base}m:`, what.marksBefore],
        )) as [number, number]
        marks += Number(dropped)
        if (Number(dropped) < 500) break
      }
    // Each pass drops at most 500 and says how many it looked at: done when fewer.
    const until = async (pass: (offset: number) => Promise<unknown>) => {
      let dropped = 0
      for (let offset = 0; ; offset += 500) {
        const [count, seen] = (await pass(offset)) as [number, number]
        dropped += Number(count)
        if (Number(seen) < 500) return dropped
      }
    }
    const entryPrefix = `${this.#base}e:`
    const keptPrefix = `${this.#base}kept:`
    const bodiesIndex = `${this.#base}bodies`
    const bound = what.entriesBefore
    if (bound !== undefined)
      entries += await until(() =>
        PURGE_ENTRIES(
          this.#client,
          [`${this.#base}by-time`, bodiesIndex],
          [entryPrefix, `${this.#base}account:`, keptPrefix, bound],
        ),
      )
    const expired = what.bodiesBefore
    if (expired !== undefined)
      bodies += await until(() =>
        PURGE_BODIES(this.#client, [bodiesIndex], [entryPrefix, keptPrefix, expired]),
      )
    // The account's index stays (it lists the entries): walked by offset. The others shrink.
    const account = what.account
    if (account !== undefined)
      bodies += await until((offset) =>
        PURGE_ACCOUNT_BODIES(
          this.#client,
          [this.#account(account), bodiesIndex],
          [entryPrefix, keptPrefix, offset],
        ),
      )
    return { bodies, entries, marks }
  }
}

function assemble(v: string, e: string, b: string, x: string, c: string): StoredLedgerEntry {
  const entry = JSON.parse(e) as StoredLedgerEntry
  entry.version = Number(v)
  if (c === '1') entry.bodyCapped = true
  if (b !== '') {
    entry.body = b
    entry.bodyExpiresAt = Number(x)
  }
  return entry
}
