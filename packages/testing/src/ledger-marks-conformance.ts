import assert from 'node:assert/strict'
import { accountKey } from '@scheduling-kit/core/store'
import { entry, type It, type Make, tag } from './ledger-kit.js'

// The ledger store battery's resource marks, holds and purges: marks by compare-and-set, moved
// on only with a write and never back, holds for one owner at a time, purges a stale writer
// cannot undo.

export function ledgerMarksAndPurges(make: Make, it: It): void {
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

export function ledgerMarkPurges(make: Make, it: It): void {
  it('purge({ marksBefore }) drops the marks whose horizon is before it (applied long ago, their Event ended), written by setMark or with a write; a mark of an Event yet to end stays', async () => {
    const s = await make()
    const now = Date.now()
    const day = 86_400_000
    const old = now - 40 * day
    // Events of alice, the account of the kit's entries (a mark's resource names its account).
    const id = () => accountKey('alice', `event_${tag()}`)
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
export function ledgerCombinedWrites(make: Make, it: It): void {
  it('writeReadingMark (when the store has it): writes by compare-and-set and answers the mark', async () => {
    const s = await make()
    if (s.writeReadingMark === undefined) return
    // The mark of an Event of the entry's account, as the ledger's are (resourceKey).
    const resourceId = accountKey('alice', `event_${tag()}`)
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
    const resourceId = accountKey('alice', `event_${tag()}`)
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

/** Resource holds, when the store has them (a store several processes share). */
export function ledgerHolds(make: Make, it: It): void {
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
