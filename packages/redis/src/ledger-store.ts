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

// KEYS: entry, by-time, body expiry, account index, a resource's mark (the entry again when
// none), the account's kept bodies, the marks' index. ARGV: entry JSON, expected version ('' for
// none), received at, id, body, body expiry, status, type, account ('' for none), then what to
// do with the mark: '' nothing, 'read' (answer it too), or 'advance' with the mark's JSON, time,
// rank, delivery, horizon and resource (moved on unless the one there is newer, and indexed by
// its horizon for purge); last, the most bodies an account keeps.
// A body is kept from the first write only (later writes keep or drop it), and only while the
// account keeps fewer unexpired ones than the most (else the entry is marked `c`). Answers the
// new version (0: refused), with the mark for 'read'.
const WRITE = script(`
local v = redis.call('HGET', KEYS[1], 'v')
if ARGV[2] == '' then
  if v then return 0 end
elseif v ~= ARGV[2] then
  return 0
end
local nv = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'e', ARGV[1], 's', ARGV[7], 't', ARGV[8], 'r', ARGV[3], 'a', ARGV[9])
if ARGV[5] == '' then
  redis.call('HDEL', KEYS[1], 'b', 'x')
  redis.call('ZREM', KEYS[3], ARGV[4])
  if ARGV[9] ~= '' then redis.call('ZREM', KEYS[6], ARGV[4]) end
elseif ARGV[2] == '' then
  local keep = true
  if ARGV[9] ~= '' then
    redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', ARGV[3])
    keep = redis.call('ZCARD', KEYS[6]) < tonumber(ARGV[#ARGV])
  end
  if keep then
    redis.call('HSET', KEYS[1], 'b', ARGV[5], 'x', ARGV[6])
    redis.call('ZADD', KEYS[3], ARGV[6], ARGV[4])
    if ARGV[9] ~= '' then redis.call('ZADD', KEYS[6], ARGV[6], ARGV[4]) end
  else
    redis.call('HSET', KEYS[1], 'c', '1')
  end
end
if ARGV[2] == '' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
  if ARGV[9] ~= '' then redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4]) end
end
if ARGV[10] == 'read' then
  local m = redis.call('HMGET', KEYS[5], 'v', 'm')
  return {nv, m[1] or '', m[2] or ''}
elseif ARGV[10] == 'advance' then
  local f = redis.call('HMGET', KEYS[5], 'v', 'at', 'rank', 'by')
  local at, rank = tonumber(ARGV[12]), tonumber(ARGV[13])
  if (not f[1]) or f[4] == ARGV[14] or tonumber(f[2]) < at or (tonumber(f[2]) == at and tonumber(f[3]) <= rank) then
    redis.call('HINCRBY', KEYS[5], 'v', 1)
    redis.call('HSET', KEYS[5], 'm', ARGV[11], 'at', ARGV[12], 'rank', ARGV[13], 'by', ARGV[14])
    redis.call('ZADD', KEYS[7], ARGV[15], ARGV[16])
  end
end
return nv`)

// KEYS: the index to walk. ARGV: entry key prefix, cursor score ('' for none), cursor id,
// since, until ('' for none), page size, statuses (comma-separated, '' for any), '1' when no
// status matches, type ('' for any). Walks newest first, at most 2 000 index entries a call.
// Returns { matches as {v, e, b, x}..., more, last score, last id }.
const LIST = script(`
local prefix = ARGV[1]
local cursorScore = ARGV[2] ~= '' and tonumber(ARGV[2]) or nil
local cursorId = ARGV[3]
local max = cursorScore and ARGV[2] or '+inf'
local untilScore = ARGV[5] ~= '' and tonumber(ARGV[5]) or nil
local limit = tonumber(ARGV[6])
local statuses = nil
if ARGV[7] ~= '' then
  statuses = {}
  for s in string.gmatch(ARGV[7], '[^,]+') do statuses[s] = true end
end
if ARGV[8] == '1' then return {{}, 0, '', ''} end
local out = {}
local offset = 0
local walked = 0
local lastScore, lastId = '', ''
while walked < 2000 do
  local batch = redis.call('ZREVRANGEBYSCORE', KEYS[1], max, ARGV[4], 'WITHSCORES', 'LIMIT', offset, 200)
  if #batch == 0 then return {out, 0, lastScore, lastId} end
  offset = offset + #batch / 2
  for i = 1, #batch, 2 do
    local id, score = batch[i], batch[i + 1]
    local n = tonumber(score)
    if not (cursorScore and n == cursorScore and id >= cursorId) then
      walked = walked + 1
      lastScore, lastId = score, id
      if not (untilScore and n >= untilScore) then
        local f = redis.call('HMGET', prefix .. id, 'v', 'e', 'b', 'x', 's', 't', 'c')
        if f[1] and (not statuses or statuses[f[5]]) and (ARGV[9] == '' or f[6] == ARGV[9]) then
          if #out == limit then return {out, 1, lastScore, lastId} end
          table.insert(out, {f[1], f[2], f[3] or '', f[4] or '', f[7] or ''})
        end
      end
    end
  end
end
return {out, 1, lastScore, lastId}`)

// KEYS: a resource's hold. ARGV: owner, until (0: release), now. Taken when free, lapsed or
// the owner's own; released only by its owner. Expires by itself a minute after `until`.
const HOLD = script(`
local o = redis.call('HGET', KEYS[1], 'o')
if ARGV[2] == '0' then
  if o == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
  return 0
end
if o and o ~= ARGV[1] and tonumber(redis.call('HGET', KEYS[1], 'u') or '0') > tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 'o', ARGV[1], 'u', ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[2]) - tonumber(ARGV[3]), 0) + 60000)
return 1`)

// KEYS: the mark, the marks' index. ARGV: mark JSON, expected version ('' for none), time,
// rank, delivery, horizon, resource.
const SET_MARK = script(`
local v = redis.call('HGET', KEYS[1], 'v')
if ARGV[2] == '' then
  if v then return 0 end
elseif v ~= ARGV[2] then
  return 0
end
local nv = redis.call('HINCRBY', KEYS[1], 'v', 1)
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'at', ARGV[3], 'rank', ARGV[4], 'by', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[7])
return nv`)

// KEYS: the marks' index. ARGV: mark key prefix, bound. Drops the marks whose horizon is
// before the bound, at most 500 a call: { dropped, looked at }.
const PURGE_MARKS = script(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, 500)
for _, id in ipairs(ids) do
  redis.call('DEL', ARGV[1] .. id)
  redis.call('ZREM', KEYS[1], id)
end
return {#ids, #ids}`)

// KEYS: by-time, body expiry, the account's index (for mode 'account'). ARGV: entry key
// prefix, account prefix, mode ('bodies-before', 'entries-before', 'account'), bound (the
// offset in the account's index for 'account'). At most 500 a call: { dropped, looked at }.
const PURGE = script(`
local prefix, accounts, mode, bound, kept = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local ids
if mode == 'account' then
  ids = redis.call('ZRANGE', KEYS[3], tonumber(bound), tonumber(bound) + 499)
elseif mode == 'bodies-before' then
  ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', bound, 'LIMIT', 0, 500)
else
  ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. bound, 'LIMIT', 0, 500)
end
local dropped = 0
for _, id in ipairs(ids) do
  local key = prefix .. id
  if mode == 'entries-before' then
    local account = redis.call('HGET', key, 'a')
    redis.call('DEL', key)
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZREM', KEYS[2], id)
    if account and account ~= '' then
      redis.call('ZREM', accounts .. account, id)
      redis.call('ZREM', kept .. account, id)
    end
    dropped = dropped + 1
  else
    if redis.call('HEXISTS', key, 'b') == 1 then
      local account = redis.call('HGET', key, 'a')
      if account and account ~= '' then redis.call('ZREM', kept .. account, id) end
      redis.call('HDEL', key, 'b', 'x')
      redis.call('HINCRBY', key, 'v', 1)
      dropped = dropped + 1
    end
    redis.call('ZREM', KEYS[2], id)
  end
end
return {dropped, #ids}`)

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
    const version = await this.#write(entry, expected, undefined, [])
    return version === 0 ? undefined : Number(version)
  }

  async writeReadingMark(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string,
  ): Promise<{ version: number | undefined; mark: StoredResourceMark | undefined }> {
    const answer = await this.#write(entry, expected, resourceId, ['read'])
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
    const version = await this.#write(entry, expected, mark.resourceId, [
      'advance',
      JSON.stringify(mark),
      mark.at,
      mark.rank,
      mark.by,
      markHorizonOf(mark),
      mark.resourceId,
    ])
    return version === 0 ? undefined : Number(version)
  }

  #write(
    entry: LedgerEntry,
    expected: number | undefined,
    resourceId: string | undefined,
    markArgs: ReadonlyArray<string | number>,
  ): Promise<unknown> {
    const { body, bodyExpiresAt, bodyCapped: _capped, ...rest } = entry
    const entryKey = this.#entry(entry.id)
    return WRITE(
      this.#client,
      [
        entryKey,
        `${this.#base}by-time`,
        `${this.#base}bodies`,
        this.#account(entry.account ?? ''),
        resourceId === undefined ? entryKey : `${this.#base}m:${resourceId}`,
        `${this.#base}kept:${entry.account ?? ''}`,
        `${this.#base}marks`,
      ],
      [
        JSON.stringify(rest),
        expected === undefined ? '' : String(expected),
        entry.receivedAt,
        entry.id,
        body === undefined ? '' : body,
        body === undefined ? '' : (bodyExpiresAt ?? Number.MAX_SAFE_INTEGER),
        entry.status,
        entry.type,
        entry.account ?? '',
        ...(markArgs.length === 0 ? [''] : markArgs),
        this.#maxBodies,
      ],
    )
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
    const run = async (mode: string, bound: number, index: string) => {
      let dropped = 0
      // The account's index stays (it lists the entries): walked by offset. The others shrink.
      for (let offset = 0; ; offset += 500) {
        const [count, seen] = (await PURGE(
          this.#client,
          [`${this.#base}by-time`, `${this.#base}bodies`, index],
          [
            `${this.#base}e:`,
            `${this.#base}account:`,
            mode,
            mode === 'account' ? offset : bound,
            `${this.#base}kept:`,
          ],
        )) as [number, number]
        dropped += Number(count)
        if (Number(seen) < 500) return dropped
      }
    }
    if (what.entriesBefore !== undefined)
      entries += await run('entries-before', what.entriesBefore, `${this.#base}bodies`)
    if (what.bodiesBefore !== undefined)
      bodies += await run('bodies-before', what.bodiesBefore, `${this.#base}bodies`)
    if (what.account !== undefined) bodies += await run('account', 0, this.#account(what.account))
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
