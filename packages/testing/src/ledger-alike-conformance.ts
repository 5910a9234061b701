import assert from 'node:assert/strict'
import { accountKey } from '@scheduling-kit/core/store'
import { alikeKeys } from './alike-keys.js'
import { entry, type It, type Make, tag } from './ledger-kit.js'

// The ledger store battery's keys: accounts, ids and resources that differ only in a lone
// surrogate, `:`, `{`, `}` or length keep their own entries, listings, bodies, marks and holds.

export function ledgerAlikeKeys(make: Make, it: It): void {
  it('accounts, ids and resources that differ only in lone surrogates, :, {, } or length: their own entries, listings, bodies, marks and holds', async () => {
    const s = await make({ maxBodiesPerAccount: 1 })
    const accounts = alikeKeys(`acct_${tag()}`)
    const payload = `payload_${tag()}`
    for (const account of accounts) {
      const e = entry({ id: accountKey(account, payload), account, body: '{}' })
      e.bodyExpiresAt = Date.now() + 60_000
      assert.equal(await s.write(e, undefined), 1, `the first write of ${JSON.stringify(account)}`)
    }
    for (const account of accounts) {
      const read = await s.get(accountKey(account, payload))
      assert.equal(read?.account, account, 'each id reads back its own entry')
      assert.equal(read?.body, '{}', 'each account keeps its own body (its own count)')
      const page = await s.list({ account })
      assert.deepEqual(
        page.entries.map((e) => e.account),
        [account],
        `the listing of ${JSON.stringify(account)} holds its entry alone`,
      )
    }
    const ids = alikeKeys(`payload_${tag()}`)
    for (const id of ids)
      assert.equal(await s.write(entry({ id }), undefined), 1, 'ids of no account')
    for (const id of ids) assert.equal((await s.get(id))?.id, id)
    const resources = alikeKeys(`event_${tag()}`)
    for (const [i, resourceId] of resources.entries()) {
      const mark = { resourceId, at: 1_714_572_202_000 + i, rank: 1, by: `p${i}` }
      assert.equal(
        await s.setMark(mark, undefined),
        1,
        `the first mark of ${JSON.stringify(resourceId)}`,
      )
    }
    for (const [i, resourceId] of resources.entries())
      assert.equal((await s.mark(resourceId))?.by, `p${i}`, 'each resource its own mark')
    if (s.holdResource === undefined) return
    const now = Date.now()
    for (const [i, resourceId] of resources.entries())
      assert.equal(
        await s.holdResource(resourceId, `o${i}`, now + 60_000, now),
        true,
        'its own hold',
      )
  })
}
