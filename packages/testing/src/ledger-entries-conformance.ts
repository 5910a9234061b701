import assert from 'node:assert/strict'
import type {
  LedgerEntry,
  LedgerFilter,
  LedgerStore,
  StoredLedgerEntry,
} from '@scheduling-kit/core'
import { accountKey } from '@scheduling-kit/core/store'
import { entry, fieldsOf, type It, type Make, tag, withoutBody } from './ledger-kit.js'

// The ledger store battery's entries: compare-and-set writes (one of many parallel writers wins),
// fields kept exactly, listing newest first in cursor pages, filters, and the bounds on bodies.

export function ledgerWrites(make: Make, it: It): void {
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
      id: accountKey('zoë-日本', `payload_${tag()}`),
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

export function ledgerLists(make: Make, it: It): void {
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
    const seen = await readAll(s, { account }, 5)
    assert.equal(seen.length, 23)
    assert.deepEqual(new Set(seen.map((e) => e.id)), new Set(ids))
  })

  it('entries of many accounts listed together: newest first, each once, in pages of any size', async () => {
    const s = await make()
    const type = `event.kit-${tag()}`
    const base = Date.now() - 20_000
    const ids: string[] = []
    for (let i = 0; i < 40; i++) {
      const e = entry({ account: `many-${i % 13}-${tag()}`, type, receivedAt: base + (i % 9) })
      ids.push(e.id)
      await s.write(e, undefined)
    }
    for (const limit of [1, 3, 7, 40]) {
      const seen = await readAll(s, { type }, limit)
      assert.deepEqual(seen.map((e) => e.id).sort(), [...ids].sort(), `pages of ${limit}`)
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

/** A later write never sets a body. */
function bodyFromFirstWrite(make: Make, it: It): void {
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
}

/** maxBodiesPerAccount holds when first writes of one account race. */
function bodyBoundRacing(make: Make, it: It): void {
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
}

/** Past maxBodiesPerAccount, new entries are written without their body. */
function bodyBoundPast(make: Make, it: It): void {
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

/** Bodies: kept from the first write only, and per account only up to the store's bound. */
export function ledgerBodyBounds(make: Make, it: It): void {
  bodyFromFirstWrite(make, it)
  bodyBoundRacing(make, it)
  bodyBoundPast(make, it)
}

/** Every page of a listing, each at most `limit`, checked newest first (then the greater id). */
async function readAll(
  s: LedgerStore,
  filter: LedgerFilter,
  limit: number,
): Promise<StoredLedgerEntry[]> {
  const seen: StoredLedgerEntry[] = []
  let after: string | undefined
  for (let pages = 1; ; pages++) {
    const page = await s.list({ ...filter, limit, ...(after === undefined ? {} : { after }) })
    assert.ok(page.entries.length <= limit)
    seen.push(...page.entries)
    after = page.next
    if (after === undefined) break
    assert.ok(pages <= 100, 'the cursor never ends')
  }
  const ordered = (a: StoredLedgerEntry, b: StoredLedgerEntry) =>
    a.receivedAt > b.receivedAt || (a.receivedAt === b.receivedAt && a.id > b.id)
  for (let i = 1; i < seen.length; i++) assert.ok(ordered(seen[i - 1]!, seen[i]!), 'newest first')
  return seen
}
