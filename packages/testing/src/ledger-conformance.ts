import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { LedgerEntry, LedgerStore, StoredLedgerEntry } from '@scheduling-kit/core'
import { ConfigError } from '@scheduling-kit/core'
import type { StoreConformanceOptions } from './store-conformance.js'

// The battery a `LedgerStore` must pass: compare-and-set writes of entries and resource marks
// (exactly one of many parallel writers wins), fields kept exactly, listing newest first in
// cursor pages that cover every match once, filters, and purges that a stale writer cannot undo.

const tag = () => randomBytes(4).toString('hex')

function entry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const id = overrides.id ?? `account:5:alice:payload_${tag()}`
  return {
    id,
    payloadId: `payload_${tag()}`,
    type: 'event.created',
    source: 'webhook',
    status: 'processing',
    attempts: 1,
    receivedAt: Date.now(),
    updatedAt: Date.now(),
    owner: 'owner-a',
    leaseUntil: Date.now() + 60_000,
    ...overrides,
  }
}

/** The entry as written, without the version the store adds. */
const fieldsOf = ({ version: _version, ...rest }: StoredLedgerEntry) => rest

/** What the kit asks of a store it makes: a bound of its own for one test. */
export interface LedgerStoreKitOptions {
  /** The store's `maxBodiesPerAccount`. */
  maxBodiesPerAccount?: number
}

/**
 * Runs the ledger store battery. `createStore` gives a store over an empty (or private)
 * ledger: the kit's entries are tagged at random, and one account per test is its own. It
 * passes `options` on to the store it makes (`maxBodiesPerAccount`).
 *
 * @example
 * ```ts
 * // test/ledger-store.test.ts
 * import { describe, it } from 'vitest'
 * runLedgerStoreConformance(() => new MyLedgerStore(db), { describe, it })
 * ```
 */
export function runLedgerStoreConformance(
  createStore: (options?: LedgerStoreKitOptions) => LedgerStore | Promise<LedgerStore>,
  options: StoreConformanceOptions,
): void {
  const { describe, it } = options ?? {}
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new ConfigError('runLedgerStoreConformance: pass { describe, it } from your test runner.')
  }
  describe(options.name ?? 'LedgerStore conformance', () => {
    ledgerWrites(createStore, it)
    ledgerLists(createStore, it)
    ledgerMarksAndPurges(createStore, it)
    ledgerMarkPurges(createStore, it)
    ledgerCombinedWrites(createStore, it)
    ledgerBodyBounds(createStore, it)
    ledgerHolds(createStore, it)
  })
}

type It = StoreConformanceOptions['it']
type Make = (options?: LedgerStoreKitOptions) => LedgerStore | Promise<LedgerStore>

function ledgerWrites(make: Make, it: It): void {
  it('an entry is written only when absent, then only at its current version', async () => {
    const s = await make()
    const e = entry()
    assert.equal(await s.get(e.id), undefined)
    assert.equal(await s.write(e, undefined), 1)
    assert.equal(await s.write(e, undefined), undefined, 'a second first write is refused')
    const done = { ...e, status: 'done' as const }
    delete (done as Partial<LedgerEntry>).owner
    delete (done as Partial<LedgerEntry>).leaseUntil
    assert.equal(await s.write(done, 2), undefined, 'a write at a version not yet reached')
    assert.equal(await s.write(done, 1), 2)
    assert.equal(await s.write({ ...done, status: 'failed' }, 1), undefined, 'a stale writer')
    const read = await s.get(e.id)
    assert.equal(read?.version, 2)
    assert.equal(read?.status, 'done')
    assert.equal(read?.owner, undefined, 'a field the write leaves out is gone')
    assert.equal(read?.leaseUntil, undefined)
  })

  it('every field comes back as written: optional ones, text in any script, a large body', async () => {
    const s = await make()
    const e = entry({
      id: `account:9:zoë-日本:payload_${tag()}`,
      webhookId: 'wh_ü',
      account: 'zoë-日本',
      resourceId: 'event_😀',
      occurredAt: '2024-05-01T14:03:22.123Z',
      lastError: 'Error: "quoted" \\ back\nslash',
      body: `{"id":"x","text":"${'é😀'.repeat(40_000)}"}`,
      bodyExpiresAt: Date.now() + 86_400_000,
      attempts: 7,
      source: 'catch-up',
    })
    await s.write(e, undefined)
    const read = await s.get(e.id)
    assert.ok(read)
    assert.deepEqual(fieldsOf(read), e)
    // The ledger writes every field, `undefined` where it is not set: read back as absent.
    const {
      owner: _owner,
      leaseUntil: _lease,
      ...sparse
    } = entry({
      id: `sparse_${tag()}`,
      status: 'done',
    })
    const layout = { webhookId: undefined, owner: undefined, leaseUntil: undefined }
    await s.write({ ...sparse, ...layout, lastError: undefined }, undefined)
    const back = await s.get(sparse.id)
    assert.ok(back)
    assert.deepEqual(fieldsOf(back), sparse)
  })

  it('of 20 parallel first writes of one id exactly one wins; of 20 writes at one version, exactly one', async () => {
    const s = await make()
    const e = entry()
    const firsts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.write({ ...e, owner: `o${i}` }, undefined)),
    )
    assert.equal(firsts.filter((v) => v === 1).length, 1)
    assert.equal(firsts.filter((v) => v === undefined).length, 19)
    const winner = firsts.indexOf(1)
    assert.equal((await s.get(e.id))?.owner, `o${winner}`)
    const seconds = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.write({ ...e, owner: `p${i}` }, 1)),
    )
    assert.equal(seconds.filter((v) => v === 2).length, 1)
    assert.equal((await s.get(e.id))?.owner, `p${seconds.indexOf(2)}`)
  })
}

function ledgerLists(make: Make, it: It): void {
  it('lists newest first; pages by cursor cover every match exactly once, equal times included', async () => {
    const s = await make()
    const account = `lister-${tag()}`
    const base = Date.now() - 10_000
    const ids: string[] = []
    for (let i = 0; i < 23; i++) {
      const e = entry({ account, receivedAt: base + Math.floor(i / 3), status: 'done' })
      ids.push(e.id)
      await s.write(e, undefined)
    }
    const seen: StoredLedgerEntry[] = []
    let after: string | undefined
    let pages = 0
    do {
      const page = await s.list({ account, limit: 5, ...(after === undefined ? {} : { after }) })
      assert.ok(page.entries.length <= 5)
      seen.push(...page.entries)
      after = page.next
      pages++
      assert.ok(pages <= 10, 'the cursor never ends')
    } while (after !== undefined)
    assert.equal(seen.length, 23)
    assert.deepEqual(new Set(seen.map((e) => e.id)), new Set(ids))
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!]
      assert.ok(
        a.receivedAt > b.receivedAt || (a.receivedAt === b.receivedAt && a.id > b.id),
        'newest first, then the greater id',
      )
    }
  })

  it('filters by status (one or several), type, account, since and until; a page holds at most 1 000', async () => {
    const s = await make()
    const account = `filters-${tag()}`
    const t0 = Date.now() - 60_000
    const rows: [LedgerEntry['status'], string, number][] = [
      ['done', 'event.created', t0],
      ['failed', 'event.created', t0 + 1_000],
      ['dead', 'event.canceled', t0 + 2_000],
      ['stale', 'event.created', t0 + 3_000],
    ]
    for (const [status, type, receivedAt] of rows)
      await s.write(entry({ account, status, type, receivedAt }), undefined)
    await s.write(entry({ account: `${account}-other`, status: 'dead' }), undefined)
    const statuses = async (filter: Parameters<LedgerStore['list']>[0]) =>
      (await s.list({ account, ...filter })).entries.map((e) => e.status)
    assert.deepEqual(await statuses({ status: 'dead' }), ['dead'])
    assert.deepEqual(await statuses({ status: ['failed', 'dead'] }), ['dead', 'failed'])
    assert.deepEqual(await statuses({ type: 'event.created' }), ['stale', 'failed', 'done'])
    assert.deepEqual(await statuses({ since: t0 + 1_000, until: t0 + 3_000 }), ['dead', 'failed'])
    assert.deepEqual(await statuses({ since: new Date(t0 + 2_500) }), ['stale'])
    assert.deepEqual(await statuses({ status: [] }), [])
    const all = await s.list({ limit: 5_000 })
    assert.ok(all.entries.length <= 1_000)
  })
}

function ledgerMarksAndPurges(make: Make, it: It): void {
  it('a resource mark is written by compare-and-set; of 20 parallel writers at one version one wins', async () => {
    const s = await make()
    const resourceId = `event_${tag()}`
    assert.equal(await s.mark(resourceId), undefined)
    const mark = { resourceId, at: 1_714_572_202_000, rank: 1, by: 'p1' }
    assert.equal(await s.setMark(mark, undefined), 1)
    assert.equal(await s.setMark(mark, undefined), undefined)
    const racers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.setMark({ ...mark, rank: 5, by: `q${i}` }, 1)),
    )
    assert.equal(racers.filter((v) => v === 2).length, 1)
    assert.deepEqual(await s.mark(resourceId), {
      ...mark,
      rank: 5,
      by: `q${racers.indexOf(2)}`,
      version: 2,
    })
  })

  it("purge drops expired bodies (the entry stays, its version moves on), old entries, and one account's bodies", async () => {
    const s = await make()
    const now = Date.now()
    const account = `purged-${tag()}`
    const expired = entry({ status: 'done', body: '{}', bodyExpiresAt: now - 1 })
    const kept = entry({ status: 'done', body: '{"k":1}', bodyExpiresAt: now + 60_000 })
    const mine = entry({ account, status: 'dead', body: '{"m":1}', bodyExpiresAt: now + 60_000 })
    const old = entry({ status: 'done', receivedAt: now - 100_000_000_000 })
    for (const e of [expired, kept, mine, old]) await s.write(e, undefined)
    const first = await s.purge({ bodiesBefore: now, entriesBefore: now - 50_000_000_000 })
    assert.ok(first.bodies >= 1 && first.entries >= 1, JSON.stringify(first))
    const after = await s.get(expired.id)
    assert.equal(after?.body, undefined)
    assert.equal(after?.bodyExpiresAt, undefined)
    assert.equal(after?.version, 2, 'a purge moves the version on')
    assert.equal(
      await s.write({ ...expired, status: 'failed' }, 1),
      undefined,
      'a writer that read before the purge cannot write the body back',
    )
    assert.equal(await s.get(old.id), undefined)
    assert.equal((await s.get(kept.id))?.body, '{"k":1}')
    const theirs = await s.purge({ account })
    assert.deepEqual([theirs.bodies, theirs.entries], [1, 0])
    assert.equal((await s.get(mine.id))?.body, undefined)
    assert.equal((await s.get(mine.id))?.status, 'dead', 'the entry outlives its body')
    assert.equal((await s.get(kept.id))?.body, '{"k":1}')
  })
}

function ledgerMarkPurges(make: Make, it: It): void {
  it('purge({ marksBefore }) drops the marks whose horizon is before it (applied long ago, their Event ended), written by setMark or with a write; a mark of an Event yet to end stays', async () => {
    const s = await make()
    const now = Date.now()
    const day = 86_400_000
    const old = now - 40 * day
    const id = () => `event_${tag()}`
    const ended = { resourceId: id(), at: old, rank: 1, by: 'p1', appliedAt: old }
    const endedLater = {
      ...ended,
      resourceId: id(),
      when: `${new Date(old).toISOString()}/${new Date(old + day).toISOString()}`,
    }
    const ahead = {
      ...ended,
      resourceId: id(),
      when: `${new Date(now + 30 * day).toISOString()}/${new Date(now + 31 * day).toISOString()}`,
    }
    const recent = { ...ended, resourceId: id(), appliedAt: now - day }
    for (const m of [ended, endedLater, ahead, recent])
      assert.equal(await s.setMark(m, undefined), 1)
    // One moved on by a finishing write (the ledger's usual way), applied long ago too.
    const withWrite = { ...ended, resourceId: id() }
    if (s.writeAdvancingMark !== undefined) {
      const e = entry()
      await s.write(e, undefined)
      assert.equal(await s.writeAdvancingMark(e, 1, withWrite), 2)
    } else assert.equal(await s.setMark(withWrite, undefined), 1)
    // A mark moved on since it was first written is kept by its new horizon.
    const revived = { ...ended, resourceId: id() }
    assert.equal(await s.setMark(revived, undefined), 1)
    assert.equal(await s.setMark({ ...revived, appliedAt: now }, 1), 2)
    const purged = await s.purge({ marksBefore: now - 30 * day })
    // The store may hold other tests' marks (the kit tags its own, it does not empty the store).
    assert.ok((purged.marks ?? 0) >= 3, JSON.stringify(purged))
    for (const gone of [ended, endedLater, withWrite])
      assert.equal(await s.mark(gone.resourceId), undefined, gone.resourceId)
    for (const kept of [ahead, recent, revived])
      assert.notEqual(await s.mark(kept.resourceId), undefined, kept.resourceId)
    assert.equal((await s.purge({ marksBefore: now - 30 * day })).marks, 0)
  })
}

/** The optional one-round-trip writes, when the store has them. */
function ledgerCombinedWrites(make: Make, it: It): void {
  it('writeReadingMark (when the store has it): writes by compare-and-set and answers the mark', async () => {
    const s = await make()
    if (s.writeReadingMark === undefined) return
    const resourceId = `event_${tag()}`
    const e = entry()
    assert.deepEqual(await s.writeReadingMark(e, undefined, resourceId), {
      version: 1,
      mark: undefined,
    })
    const mark = { resourceId, at: 1_000, rank: 1, by: 'p1', state: 'confirmed' }
    await s.setMark(mark, undefined)
    const next = await s.writeReadingMark({ ...e, status: 'done' }, 1, resourceId)
    assert.deepEqual(next, { version: 2, mark: { ...mark, version: 1 } })
    const refused = await s.writeReadingMark(e, 1, resourceId)
    assert.equal(refused.version, undefined)
    assert.equal((await s.get(e.id))?.status, 'done')
  })

  it('writeAdvancingMark (when the store has it): the mark moves on with the write, never back, never on a refused write', async () => {
    const s = await make()
    if (s.writeAdvancingMark === undefined) return
    const advance = s.writeAdvancingMark.bind(s)
    const resourceId = `event_${tag()}`
    const at = (t: number, rank: number, by: string) => ({ resourceId, at: t, rank, by })
    const e = entry()
    await s.write(e, undefined)
    assert.equal(await advance(e, 1, at(2_000, 1, 'p2')), 2)
    assert.equal((await s.mark(resourceId))?.by, 'p2')
    assert.equal(await advance(e, 2, at(1_000, 5, 'p1')), 3, 'the write lands')
    assert.equal((await s.mark(resourceId))?.by, 'p2', 'an older time does not move the mark back')
    await advance(e, 3, at(2_000, 0, 'p3'))
    assert.equal((await s.mark(resourceId))?.by, 'p2', 'the same time and a lower rank does not')
    await advance(e, 4, at(2_000, 1, 'p4'))
    assert.equal((await s.mark(resourceId))?.by, 'p4', 'the same time and rank does')
    assert.equal(await advance(e, 1, at(9_000, 9, 'p9')), undefined)
    assert.equal((await s.mark(resourceId))?.by, 'p4', 'a refused write moves no mark')
    // Twenty deliveries of one resource finishing at once: the newest one's mark stays.
    const racers = Array.from({ length: 20 }, () => entry())
    for (const r of racers) await s.write(r, undefined)
    await Promise.all(racers.map((r, i) => advance(r, 1, at(10_000 + i, 1, `q${i}`))))
    assert.equal((await s.mark(resourceId))?.by, 'q19')
  })
}

/** Bodies: kept from the first write only, and per account only up to the store's bound. */
function ledgerBodyBounds(make: Make, it: It): void {
  it('a later write never sets a body: one purged stays gone, one never kept stays absent', async () => {
    const s = await make()
    const now = Date.now()
    const bare = entry({ status: 'processing' })
    assert.equal(await s.write(bare, undefined), 1)
    assert.equal(
      await s.write(
        { ...bare, status: 'done', body: '{"late":1}', bodyExpiresAt: now + 60_000 },
        1,
      ),
      2,
    )
    assert.equal((await s.get(bare.id))?.body, undefined)
    const kept = entry({ body: '{"k":1}', bodyExpiresAt: now + 60_000 })
    assert.equal(await s.write(kept, undefined), 1)
    assert.equal(await s.write({ ...kept, status: 'done', body: '{"other":1}' }, 1), 2)
    assert.equal((await s.get(kept.id))?.body, '{"k":1}', 'the first body stays')
    assert.equal(await s.write(withoutBody({ ...kept, status: 'done' }), 2), 3)
    assert.equal((await s.get(kept.id))?.body, undefined, 'a write without it drops it')
  })

  it('maxBodiesPerAccount holds exactly when 40 first writes of one account race (on a pooled store, over as many connections)', async () => {
    const s = await make({ maxBodiesPerAccount: 7 })
    const account = `race-${tag()}`
    const now = Date.now()
    const racers = Array.from({ length: 40 }, (_, n) =>
      entry({ account, receivedAt: now + n, body: `{"n":${n}}`, bodyExpiresAt: now + 60_000 }),
    )
    const versions = await Promise.all(racers.map((e) => s.write(e, undefined)))
    assert.deepEqual(new Set(versions), new Set([1]), 'every entry written')
    const read = await Promise.all(racers.map((e) => s.get(e.id)))
    assert.equal(read.filter((e) => e?.body !== undefined).length, 7, 'exactly the bound kept')
    assert.equal(read.filter((e) => e?.bodyCapped === true).length, 33)
  })

  it("maxBodiesPerAccount: past it, an account's new entries are written without their body (bodyCapped); other accounts, expired bodies and a purge make room", async () => {
    const s = await make({ maxBodiesPerAccount: 3 })
    const now = Date.now()
    const flood = `flood-${tag()}`
    const other = `other-${tag()}`
    const body = (n: number) => ({ body: `{"n":${n}}`, bodyExpiresAt: now + 60_000 })
    // One expired body does not count.
    await s.write(
      entry({ account: flood, receivedAt: now, body: '{}', bodyExpiresAt: now - 1 }),
      undefined,
    )
    const written: LedgerEntry[] = []
    for (let n = 0; n < 5; n++) {
      const e = entry({ account: flood, receivedAt: now + n, ...body(n) })
      assert.equal(await s.write(e, undefined), 1)
      written.push(e)
    }
    const read = await Promise.all(written.map((e) => s.get(e.id)))
    assert.deepEqual(
      read.map((e) => e?.body),
      ['{"n":0}', '{"n":1}', '{"n":2}', undefined, undefined],
    )
    assert.deepEqual(
      read.map((e) => e?.bodyCapped === true),
      [false, false, false, true, true],
    )
    assert.equal(read[4]?.status, 'processing', 'the entry is written as given, its body aside')
    // The mark stays through later writes, which never bring a body.
    assert.equal(await s.write({ ...written[4]!, status: 'done' }, 1), 2)
    const after = await s.get(written[4]!.id)
    assert.equal(after?.bodyCapped, true)
    assert.equal(after?.body, undefined)
    const listed = await s.list({ account: flood })
    assert.equal(listed.entries.filter((e) => e.bodyCapped === true).length, 2)
    // Another account is not held back.
    const theirs = entry({ account: other, ...body(9) })
    await s.write(theirs, undefined)
    assert.equal((await s.get(theirs.id))?.body, '{"n":9}')
    // Once the account's bodies are purged, new ones are kept again.
    await s.purge({ account: flood })
    const again = entry({ account: flood, receivedAt: now + 10, ...body(10) })
    await s.write(again, undefined)
    assert.equal((await s.get(again.id))?.body, '{"n":10}')
  })
}

const withoutBody = ({ body: _b, bodyExpiresAt: _x, ...rest }: LedgerEntry): LedgerEntry => rest

/** Resource holds, when the store has them (a store several processes share). */
function ledgerHolds(make: Make, it: It): void {
  it('holdResource (when the store has it): taken when free, refused to another owner until it lapses, renewed by its owner, released by its owner only', async () => {
    const s = await make()
    if (s.holdResource === undefined) return
    const r = `event_${tag()}`
    const now = Date.now()
    assert.equal(await s.holdResource(r, 'a', now + 1_000, now), true)
    assert.equal(await s.holdResource(r, 'b', now + 1_000, now), false)
    assert.equal(await s.holdResource(r, 'a', now + 2_000, now + 500), true, 'renewed')
    assert.equal(await s.holdResource(r, 'b', now + 3_000, now + 1_500), false, 'renewal counts')
    assert.equal(await s.holdResource(r, 'b', now + 5_000, now + 2_000), true, 'lapsed: taken')
    assert.equal(await s.holdResource(r, 'a', 0, now + 2_001), false, 'a is no longer its owner')
    assert.equal(await s.holdResource(r, 'c', now + 6_000, now + 2_002), false, "still b's")
    assert.equal(await s.holdResource(r, 'b', 0, now + 2_003), true, 'released by b')
    assert.equal(await s.holdResource(r, 'c', now + 6_000, now + 2_004), true)
    assert.equal(
      await s.holdResource(`event_${tag()}`, 'b', now + 1_000, now),
      true,
      'one hold per resource',
    )
  })

  it('holdResource (when the store has it): of 20 owners taking one free resource at once, one holds it', async () => {
    const s = await make()
    if (s.holdResource === undefined) return
    const r = `event_${tag()}`
    const now = Date.now()
    const taken = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.holdResource!(r, `o${i}`, now + 60_000, now)),
    )
    assert.equal(taken.filter(Boolean).length, 1)
  })
}
