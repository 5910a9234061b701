import { randomBytes } from 'node:crypto'
import type { LedgerEntry } from '@scheduling-kit/core'
import { accountKey } from '@scheduling-kit/core/store'
import { afterAll, expect, it } from 'vitest'
import { RedisLedgerStore } from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

// A listing of every account, merged from the shards, when one shard stops short: list.lua walks
// at most 2 000 index entries a call, so a shard full of entries the filter passes over answers
// an empty page with more to come. The merged page must stop where that shard stopped, or a
// match of that shard older than its stop and newer than the other shards' matches is lost.

const client = redis()
afterAll(() => client.quit())

const entry = (account: string, type: string, receivedAt: number): LedgerEntry => ({
  id: accountKey(account, `payload_${randomBytes(6).toString('hex')}`),
  account,
  payloadId: 'p',
  type,
  source: 'webhook',
  status: 'done',
  attempts: 1,
  receivedAt,
  updatedAt: receivedAt,
})

it('a shard that walked 2 000 entries without a match holds the merged page back: every match listed once, newest first', async () => {
  const store = new RedisLedgerStore({
    client,
    prefix: uniquePrefix('list-merge'),
    shards: 8,
    logger: false,
  })
  const t0 = Date.now() - 3_600_000
  const busy = 'busy-account'
  const pipeline = []
  for (let i = 0; i < 2_100; i++)
    pipeline.push(store.write(entry(busy, 'event.created', t0 + 1_000 + i), undefined))
  await Promise.all(pipeline)
  // The busy account's match: older than every entry its shard walks past, newer than the rest.
  const wanted = [entry(busy, 'event.canceled', t0 + 500)]
  for (let i = 0; i < 10; i++) wanted.push(entry(`quiet-${i}`, 'event.canceled', t0 + 10 + i))
  for (const e of wanted) await store.write(e, undefined)
  for (const limit of [3, 100]) {
    const seen: string[] = []
    let after: string | undefined
    do {
      const page = await store.list({
        type: 'event.canceled',
        limit,
        ...(after === undefined ? {} : { after }),
      })
      seen.push(...page.entries.map((e) => e.id))
      after = page.next
    } while (after !== undefined)
    expect(seen, `pages of ${limit}`).toEqual(
      [...wanted].sort((a, b) => b.receivedAt - a.receivedAt).map((e) => e.id),
    )
  }
}, 60_000)
