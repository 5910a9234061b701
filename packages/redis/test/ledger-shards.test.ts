import { ConfigError } from '@scheduling-kit/core'
import { accountKey } from '@scheduling-kit/core/store'
import { afterAll, expect, it } from 'vitest'
import { RedisLedgerStore } from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

// The ledger's `shards` on a single server: one by default (the layout of every ledger before
// shards: one hash tag, the prefix), checked when given; in shards, an entry's id must name its
// account (as the ledger's do), else a listing by account would look in another shard. The
// Cluster's default and its warning are in cluster-ledger.test.ts.

const client = redis()
afterAll(() => client.quit())

const entry = (id: string, account: string | undefined) => ({
  id,
  account,
  payloadId: 'p',
  type: 'event.created',
  source: 'webhook' as const,
  status: 'done' as const,
  attempts: 1,
  receivedAt: Date.now(),
  updatedAt: Date.now(),
})

it('one shard by default on a single server: the keys of a ledger written before shards', async () => {
  const prefix = uniquePrefix('shards-default')
  const store = new RedisLedgerStore({ client, prefix, logger: false })
  const e = entry(accountKey('acct', 'payload_1'), 'acct')
  await store.write(e, undefined)
  expect(await client.zscore(`${prefix}ledger:{${prefix}}:by-time`, e.id)).toBe(
    String(e.receivedAt),
  )
  expect(await client.exists(`${prefix}ledger:{${prefix}}:e:${e.id}`)).toBe(1)
})

it('shards given: a whole number from 1 to 256, and no brace in the prefix past one', () => {
  for (const shards of [0, 257, 1.5, Number.NaN, -1])
    expect(() => new RedisLedgerStore({ client, shards, logger: false }), String(shards)).toThrow(
      ConfigError,
    )
  expect(
    () => new RedisLedgerStore({ client, prefix: 'app{1}:', shards: 8, logger: false }),
  ).toThrow(/own hash tag/)
  expect(
    () => new RedisLedgerStore({ client, prefix: 'app{1}:', shards: 1, logger: false }),
  ).not.toThrow()
})

it("in shards, an entry whose id names another account (or none) is refused, and an account's entries are listed from its shard", async () => {
  const store = new RedisLedgerStore({
    client,
    prefix: uniquePrefix('shards-ids'),
    shards: 16,
    logger: false,
  })
  await expect(store.write(entry(accountKey('alice', 'p1'), 'bob'), undefined)).rejects.toThrow(
    /must name its account/,
  )
  await expect(store.write(entry('p2', 'bob'), undefined)).rejects.toThrow(/must name its account/)
  // An entry of no account, and one of no account whose id names one: read back by id.
  for (const e of [entry('p3', undefined), entry(accountKey('carol', 'p4'), undefined)]) {
    await store.write(e, undefined)
    expect((await store.get(e.id))?.id).toBe(e.id)
  }
  const mine = Array.from({ length: 30 }, (_, i) =>
    entry(accountKey(`acct-${i % 7}`, `q${i}`), `acct-${i % 7}`),
  )
  for (const e of mine) await store.write(e, undefined)
  for (let a = 0; a < 7; a++) {
    const listed = await store.list({ account: `acct-${a}` })
    expect(listed.entries.map((e) => e.id).sort()).toEqual(
      mine
        .filter((e) => e.account === `acct-${a}`)
        .map((e) => e.id)
        .sort(),
    )
  }
})
