import { createHmac, randomBytes } from 'node:crypto'
import { raceWhileSweeping } from '@scheduling-kit/conformance'
import {
  createCredentialCipher,
  generateCredentialKey,
  type SubscriptionRecord,
} from '@scheduling-kit/core'
import { runRefreshRace, runRefreshRaceFaults } from '@scheduling-kit/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { redis } from './helpers.js'

// Eight OS processes x 25 callers, each process with its own ioredis client and token manager,
// against a strict token endpoint (single-use rotating refresh tokens).
const storeModule = new URL('./fixtures/race-store.mjs', import.meta.url)

afterEach(() => {
  delete process.env.RACE_WITHOUT_LEASE
  delete process.env.RACE_CIPHER
})

function prefix(): void {
  process.env.RACE_PREFIX = `sk-race:${randomBytes(4).toString('hex')}:`
}

it('8 processes x 25 callers, 5 expiries: exactly one refresh per expiry, no caller error', async () => {
  prefix()
  const report = await runRefreshRace({ storeModule })
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
    Array(5).fill([1, 200, 0]),
  )
}, 180_000)

it('the lease holder killed with SIGKILL mid-refresh: the others go on once its lease expires', async () => {
  prefix()
  const report = await runRefreshRace({ storeModule, killLeaseHolder: true })
  expect(report.problems).toEqual([])
  const [first, ...rest] = report.rounds
  expect(first!.killed).toBe(true)
  expect(first!.callers).toBe(7 * 25)
  expect(first!.durationMs).toBeGreaterThanOrEqual(2_800) // the others waited for its 3 s lease
  for (const round of rest) expect(round.callers).toBe(200)
}, 180_000)

// Killed at random instants, after the answer, SIGTERMed, its connection cut at the write.
runRefreshRaceFaults({ describe, it, storeModule, prepare: prefix })

it('the kit catches a store without the lease: more than one refresh per expiry', async () => {
  prefix()
  process.env.RACE_WITHOUT_LEASE = '1'
  const report = await runRefreshRace({ storeModule, processes: 4, expiries: 1 })
  expect(report.problems.join('\n')).toMatch(/refresh requests, not 1/)
}, 180_000)

it('a key rotation halfway through the fleet while 8 processes refresh and deliveries verify, reencrypt() sweeping all along: 0 errors, one refresh per expiry, every record on the new key at the end', async () => {
  prefix()
  const keys = { k1: generateCredentialKey(), k2: generateCredentialKey() }
  // Half the processes still seal with k1, half already with k2; every one reads both.
  process.env.RACE_CIPHER = JSON.stringify({ keys, currents: ['k1', 'k2'] })
  const client = redis()
  const racePrefix = process.env.RACE_PREFIX!
  const old = createCredentialCipher({ keys, current: 'k1' })
  const rotated = createCredentialCipher({ keys, current: 'k2' })
  const sweeper = new RedisTokenStore({
    client,
    prefix: racePrefix,
    logger: false,
    cipher: rotated,
  })

  // Deliveries: the webhook's record is rewritten under either key while lookups verify.
  const writers = [old, rotated].map(
    (cipher) => new RedisSubscriptionStore({ client, prefix: racePrefix, logger: false, cipher }),
  )
  const secret = `whsec_${randomBytes(16).toString('hex')}`
  const record: SubscriptionRecord = {
    active: true,
    updatedAt: 0,
    webhooks: [{ id: 'wh_rotating', secret, url: 'https://app/hook', createdAt: 0 }],
  }
  await writers[0]!.compareAndSet('acct_rotating', record, undefined)
  const body = '{"id":"evt_1"}'
  const signature = createHmac('sha256', secret).update(body).digest('hex')
  let verified = 0
  const { report, problems, sweeps } = await raceWhileSweeping(
    () => runRefreshRace({ storeModule }),
    () => sweeper.reencrypt(),
    async (i) => {
      const writer = writers[i % 2]!
      const current = await writer.get('acct_rotating')
      await writer.compareAndSet('acct_rotating', { ...record, updatedAt: i }, current!.version)
      for (let n = 0; n < 5; n++) {
        const found = await writers[(i + n) % 2]!.findByWebhook('wh_rotating')
        const mac = createHmac('sha256', found!.record.webhooks[0]!.secret)
          .update(body)
          .digest('hex')
        if (mac !== signature) throw new Error('a delivery did not verify')
        else verified++
      }
    },
  )
  expect(report.problems).toEqual([])
  expect(report.rounds.map((r) => [r.refreshRequests, r.callers, r.errors.length])).toEqual(
    Array(5).fill([1, 200, 0]),
  )
  expect(problems).toEqual([])
  expect(verified).toBeGreaterThan(0)
  expect(sweeps).toBeGreaterThan(0)

  // The last sweep: every record on k2, readable with k2 alone.
  const final = await sweeper.reencrypt()
  expect(final.failed).toEqual([])
  await new RedisSubscriptionStore({
    client,
    prefix: racePrefix,
    logger: false,
    cipher: rotated,
  }).reencrypt()
  const records = await client.keys(`${racePrefix}*`)
  const sealed: string[] = []
  for (const key of records) {
    if ((await client.type(key)) !== 'hash') continue
    const value = await client.hget(key, 'r')
    if (value !== null) sealed.push(value)
  }
  expect(sealed.length).toBeGreaterThanOrEqual(2)
  expect(sealed.map((v) => rotated.keyIdOf(v))).toEqual(sealed.map(() => 'k2'))
}, 120_000)
