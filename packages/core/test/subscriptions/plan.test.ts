// The repair plan as a pure function, checked over every shape of record, service list,
// connection and neighbouring keys fast-check generates: what it keeps works, what it deletes
// is never another key's, and one plan followed by one settle leaves a record that plans no
// further work.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ApiWebhook } from '../../src/api/webhooks.js'
import {
  ensureCandidates,
  live,
  mustList,
  ofOtherAccount,
  planRepair,
  settleRecord,
  works,
} from '../../src/subscriptions/plan.js'
import type { SubscribedWebhook, SubscriptionRecord } from '../../src/subscriptions/store.js'

const URL_ = 'https://app.example.test/hook'
const OTHER_URL = 'https://other.example.test/hook'
const GRACE = 1_000

const ids = ['wh_1', 'wh_2', 'wh_3', 'wh_4', 'wh_5', 'wh_6']
const accounts = ['acct_p', 'acct_q']

const webhook = (id: string): fc.Arbitrary<SubscribedWebhook> =>
  fc.record(
    {
      id: fc.constant(id),
      secret: fc.constant(`s_${id}`),
      url: fc.constantFrom(URL_, OTHER_URL),
      createdAt: fc.integer({ min: 0, max: 100 }),
      removedAt: fc.integer({ min: 0, max: 3_000 }),
      gone: fc.boolean(),
      accountId: fc.constantFrom(...accounts),
    },
    { requiredKeys: ['id', 'secret', 'url', 'createdAt'] },
  )

/** A world: the record, the service's list, the connection's account, the keys next door. */
const world = fc
  .record({
    known: fc.subarray(ids),
    active: fc.boolean(),
    accountId: fc.option(fc.constantFrom(...accounts), { nil: undefined }),
    connection: fc.option(fc.constantFrom(...accounts), { nil: undefined }),
    remoteStates: fc.array(
      fc.option(fc.constantFrom('active', 'disabled', 'deleted', undefined), { nil: null }),
      { minLength: ids.length, maxLength: ids.length },
    ),
    remoteUrls: fc.array(fc.constantFrom(URL_, OTHER_URL), {
      minLength: ids.length,
      maxLength: ids.length,
    }),
    neighbours: fc.subarray(ids),
  })
  .chain((w) =>
    fc.tuple(fc.constant(w), fc.tuple(...(w.known.length === 0 ? [] : w.known.map(webhook)))),
  )
  .map(([w, webhooks]) => {
    const record: SubscriptionRecord = { active: w.active, webhooks, updatedAt: 0 }
    if (w.accountId !== undefined) record.accountId = w.accountId
    const remote = new Map<string, ApiWebhook>()
    ids.forEach((id, i) => {
      const state = w.remoteStates[i]
      if (state === null) return
      remote.set(id, {
        id,
        url: w.remoteUrls[i]!,
        ...(state === undefined ? {} : { state }),
      } as ApiWebhook)
    })
    // Another key holds some of the webhooks this record does not know.
    const known = new Set(w.known)
    const heldElsewhere = new Map(
      w.neighbours.filter((id) => !known.has(id)).map((id) => [id, 'other-key'] as const),
    )
    return { record, remote, accountId: w.connection, heldElsewhere }
  })

describe('planRepair', () => {
  it('property: what it keeps is the newest live webhook of the account that works at our url', () => {
    fc.assert(
      fc.property(world, ({ record, remote, accountId, heldElsewhere }) => {
        const plan = planRepair({ record, remote, url: URL_, accountId, heldElsewhere })
        const current = accountId ?? record.accountId
        if (plan.keep !== undefined) {
          const kept = record.webhooks.find((w) => w.id === plan.keep)!
          expect(record.active).toBe(true)
          expect(kept.removedAt).toBeUndefined()
          expect(works(remote.get(kept.id), URL_)).toBe(true)
          expect(kept.url).toBe(URL_)
          expect(ofOtherAccount(kept, current)).toBe(false)
          for (const w of live(record))
            if (w.createdAt > kept.createdAt && w.url === URL_ && !ofOtherAccount(w, current))
              expect(works(remote.get(w.id), URL_)).toBe(false)
        }
        // Active: exactly one of keep or create. Removed: neither.
        expect(plan.create).toBe(record.active && plan.keep === undefined)
        // Every other live webhook retires, with a reason; nothing else does.
        expect(new Set(plan.retire.keys())).toEqual(
          new Set(
            live(record)
              .filter((w) => w.id !== plan.keep)
              .map((w) => w.id),
          ),
        )
      }),
      { numRuns: 2_000 },
    )
  })

  it("property: it deletes only this key's retired webhooks and unknown ones at our url, never another key's", () => {
    fc.assert(
      fc.property(world, ({ record, remote, accountId, heldElsewhere }) => {
        const plan = planRepair({ record, remote, url: URL_, accountId, heldElsewhere })
        const byId = new Map(record.webhooks.map((w) => [w.id, w]))
        for (const d of plan.delete) {
          expect(heldElsewhere.has(d.id)).toBe(false)
          expect(d.id).not.toBe(plan.keep)
          const there = remote.get(d.id)
          expect(there).toBeDefined()
          expect(there!.state).not.toBe('deleted')
          const mine = byId.get(d.id)
          expect(d.known).toBe(mine !== undefined)
          if (mine !== undefined) {
            expect(mine.removedAt !== undefined || plan.retire.has(d.id)).toBe(true)
          } else expect(there!.url).toBe(URL_)
        }
        for (const { id, heldBy } of plan.leave) {
          expect(heldElsewhere.get(id)).toBe(heldBy)
          expect(byId.has(id)).toBe(false)
        }
        expect(new Set(plan.delete.map((d) => d.id)).size).toBe(plan.delete.length)
      }),
      { numRuns: 2_000 },
    )
  })

  it('property: after the plan ran and the record settled, a second plan has nothing left to do', () => {
    fc.assert(
      fc.property(world, ({ record, remote, accountId, heldElsewhere }) => {
        const plan = planRepair({ record, remote, url: URL_, accountId, heldElsewhere })
        // Carry it out in a model: the created webhook appears at the service, the deletions happen.
        const now = 2_000
        const after = new Map(remote)
        for (const d of plan.delete) after.set(d.id, { ...after.get(d.id)!, state: 'deleted' })
        let webhooks = record.webhooks.map((w) =>
          plan.retire.has(w.id) ? { ...w, removedAt: now } : w,
        )
        if (plan.create) {
          after.set('wh_new', { id: 'wh_new', url: URL_, state: 'active' } as ApiWebhook)
          webhooks = [
            ...webhooks,
            { id: 'wh_new', secret: 's', url: URL_, createdAt: 1_000, accountId },
          ].map((w) => (accountId === undefined ? { ...w, accountId: undefined } : w))
        }
        webhooks = webhooks.map((w) =>
          plan.delete.some((d) => d.id === w.id) ? { ...w, gone: true } : w,
        )
        const next: SubscriptionRecord = {
          ...record,
          webhooks,
          ...(accountId === undefined ? {} : { accountId }),
        }
        const settled = settleRecord(next, after, new Set(), now, GRACE)
        if (settled === 'forget') {
          expect(record.active).toBe(false)
          return
        }
        const final = settled === undefined ? next : { ...next, ...settled }
        const again = planRepair({
          record: final,
          remote: after,
          url: URL_,
          accountId,
          heldElsewhere,
        })
        expect(again.create).toBe(false)
        expect(again.retire.size).toBe(0)
        expect(again.delete).toEqual([])
        if (record.active) expect(again.keep).toBe(plan.keep ?? 'wh_new')
      }),
      { numRuns: 2_000 },
    )
  })
})

describe('ensure without listing', () => {
  it('property: candidates are live, at our url, of the current account, newest first', () => {
    fc.assert(
      fc.property(world, ({ record, accountId }) => {
        const candidates = ensureCandidates(record, URL_, accountId)
        for (const w of candidates) {
          expect(w.removedAt).toBeUndefined()
          expect(w.url).toBe(URL_)
          expect(ofOtherAccount(w, accountId ?? record.accountId)).toBe(false)
        }
        for (let i = 1; i < candidates.length; i++)
          expect(candidates[i - 1]!.createdAt).toBeGreaterThanOrEqual(candidates[i]!.createdAt)
      }),
    )
  })

  it('lists first after an uncertain create, or when the key changed service account', () => {
    const base: SubscriptionRecord = { active: true, webhooks: [], updatedAt: 0 }
    expect(mustList(base, 'acct_p')).toBe(false)
    expect(mustList({ ...base, uncertain: true }, undefined)).toBe(true)
    expect(mustList({ ...base, accountId: 'acct_p' }, 'acct_p')).toBe(false)
    expect(mustList({ ...base, accountId: 'acct_p' }, 'acct_q')).toBe(true)
    expect(mustList({ ...base, accountId: 'acct_p' }, undefined)).toBe(false)
  })
})

describe('the lookup cache', () => {
  it('an unknown id is read from the store once a second at most; this process forgets it on a change', async () => {
    const { OwnerCache } = await import('../../src/subscriptions/lookup.js')
    let now = 0
    let reads = 0
    let owner: { account: string; secret: string; handle: boolean } | undefined
    const cache = new OwnerCache(5_000, () => now)
    const load = async () => {
      reads++
      return owner
    }
    for (let i = 0; i < 100; i++) expect(await cache.lookup('wh_made_up', load)).toBeUndefined()
    expect(reads).toBe(1)
    now += 1_001
    expect(await cache.lookup('wh_made_up', load)).toBeUndefined()
    expect(reads).toBe(2)
    // Made by this process: it forgets the id, and the next delivery finds it.
    owner = { account: 'acct', secret: 's', handle: true }
    cache.forget('wh_made_up')
    expect(await cache.lookup('wh_made_up', load)).toEqual(owner)
    expect(reads).toBe(3)
  })
})
