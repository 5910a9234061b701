// Several OS processes on one Redis: ensure for one account at once makes one remote webhook;
// every instance reconciling at once while accounts connect, drift and disconnect leaves each
// account exactly its one webhook (none for the removed), and nothing else at the app's url.
import { spawn } from 'node:child_process'
import { createWebhookSubscriptions } from '@scheduling-kit/core'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { RedisSubscriptionStore } from '../src/index.js'
import { REDIS_URL, redis, uniquePrefix } from './helpers.js'

let service: Awaited<ReturnType<typeof startFakeSchedulingService>>
beforeAll(async () => {
  service = await startFakeSchedulingService()
})
afterAll(() => service.close())

const URL_ = 'https://app.example.test/webhooks/scheduling'

const CHILD = `
import { Redis } from 'ioredis'
import { createWebhookSubscriptions } from '@scheduling-kit/core'
import { RedisSubscriptionStore } from './dist/index.js'
const client = new Redis(process.env.REDIS_URL)
const tokens = JSON.parse(process.env.TOKENS)
const subscriptions = createWebhookSubscriptions({
  url: process.env.HOOK_URL,
  tokens: { getAccessToken: async (key) => tokens[key] },
  apiUrl: process.env.API_URL,
  store: new RedisSubscriptionStore({ client, prefix: process.env.PREFIX, logger: false }),
  cacheMs: 0,
  retry: { baseDelayMs: 5, maxDelayMs: 20 },
  logger: { debug() {}, info() {}, warn() {}, error() {} },
})
await client.ping()
await new Promise((r) => setTimeout(r, Math.max(0, Number(process.env.START_AT) - Date.now())))
const out = []
if (process.env.WORK === 'ensure')
  out.push(await subscriptions.ensure(process.env.ACCOUNT).catch((error) => ({ error: error.code })))
// Reconciles over and over until the end time (at least twice, however late it started):
// runs overlap the parent's changes.
else do {
  const report = await subscriptions.reconcile()
  out.push({ created: report.created, deleted: report.deleted, failed: report.failed, busy: report.busy.length })
} while (Date.now() < Number(process.env.END_AT) || out.length < 2)
console.log(JSON.stringify(out))
await client.quit()`

function children(count: number, env: Record<string, string>) {
  const startAt = String(Date.now() + 1_500)
  return Array.from(
    { length: count },
    () =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
          cwd: new URL('..', import.meta.url),
          env: { ...process.env, REDIS_URL, API_URL: service.apiUrl, START_AT: startAt, ...env },
        })
        let out = ''
        let err = ''
        child.stdout.on('data', (d) => (out += d))
        child.stderr.on('data', (d) => (err += d))
        child.on('exit', (code) => resolve({ code, out, err }))
      }),
  )
}

/** This process's subscriptions on the children's prefix, each account's token given. */
const subscriptionsIn = (prefix: string, url: string, tokens: Record<string, string>) =>
  createWebhookSubscriptions({
    url,
    tokens: { getAccessToken: async (key) => tokens[key]! },
    apiUrl: service.apiUrl,
    store: new RedisSubscriptionStore({ client: redis(), prefix, logger: false }),
    cacheMs: 0,
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })

const atUrl = (account: string, url: string) =>
  service.webhooks(account).filter((w) => w.url === url)

it('6 processes calling ensure for one account at once: exactly one remote webhook', async () => {
  const account = `acct_${Date.now().toString(36)}`
  const tokens = { [account]: service.auth.grant(account).access_token }
  const url = `${URL_}?t=${account}`
  const results = await Promise.all(
    children(6, {
      WORK: 'ensure',
      ACCOUNT: account,
      TOKENS: JSON.stringify(tokens),
      HOOK_URL: url,
      PREFIX: uniquePrefix('sub-ensure'),
    }),
  )
  expect(results.map((r) => [r.code, r.err])).toEqual(Array(6).fill([0, '']))
  const outcomes = results.flatMap(
    (r) => JSON.parse(r.out) as Array<{ webhookId: string; created: boolean }>,
  )
  expect(outcomes.every((o) => o.webhookId !== undefined)).toBe(true)
  expect(atUrl(account, url)).toHaveLength(1)
  expect(outcomes.filter((o) => o.created)).toHaveLength(1)
  expect(new Set(outcomes.map((o) => o.webhookId))).toEqual(new Set([atUrl(account, url)[0]!.id]))
})

it('4 processes reconciling at once while accounts connect, drift and disconnect: one webhook each, none lost, none extra', async () => {
  const prefix = uniquePrefix('sub-reconcile')
  const url = `${URL_}?t=${prefix}`
  const accounts = Array.from({ length: 12 }, (_, i) => `acct_${i}_${Date.now().toString(36)}`)
  const tokens = Object.fromEntries(accounts.map((a) => [a, service.auth.grant(a).access_token]))
  const mine = subscriptionsIn(prefix, url, tokens)
  await Promise.all(accounts.slice(0, 8).map((a) => mine.ensure(a)))
  const running = children(4, {
    WORK: 'reconcile',
    END_AT: String(Date.now() + 4_000),
    TOKENS: JSON.stringify(tokens),
    HOOK_URL: url,
    PREFIX: prefix,
  })
  await new Promise((r) => setTimeout(r, 1_500))
  // While they run: two webhooks disabled, one lost, four accounts connect, two disconnect.
  service.setWebhookState(atUrl(accounts[0]!, url)[0]!.id, 'disabled')
  service.setWebhookState(atUrl(accounts[1]!, url)[0]!.id, 'disabled')
  service.dropWebhook(atUrl(accounts[2]!, url)[0]!.id)
  await Promise.all([
    ...accounts.slice(8).map((a) => mine.ensure(a)),
    mine.remove(accounts[6]!),
    mine.remove(accounts[7]!),
  ])
  const results = await Promise.all(running)
  expect(results.map((r) => [r.code, r.err])).toEqual(Array(4).fill([0, '']))
  // They did overlap: more than one run each, and some found another instance at work.
  const runs = results.map((r) => JSON.parse(r.out) as Array<{ busy: number }>)
  expect(runs.every((r) => r.length > 1)).toBe(true)
  await mine.reconcile()
  for (const [i, account] of accounts.entries()) {
    const expected = i === 6 || i === 7 ? 0 : 1
    const there = atUrl(account, url)
    expect(
      there.filter((w) => w.state === 'active'),
      account,
    ).toHaveLength(expected)
    expect(
      there.filter((w) => w.state !== 'active'),
      account,
    ).toEqual([])
    if (expected === 1) expect((await mine.lookup(there[0]!.id))?.account).toBe(account)
  }
})

it('8 processes ensuring through a 429 storm and two creates in a row that land but answer 500: after the next ensure, one webhook, its secret known', async () => {
  for (let trial = 0; trial < 3; trial++) {
    const account = `acct_storm_${trial}_${Date.now().toString(36)}`
    const tokens = { [account]: service.auth.grant(account).access_token }
    const url = `${URL_}?t=${account}`
    const prefix = uniquePrefix('sub-storm')
    service.failApi({ status: 429, count: 12, retryAfter: '0' })
    service.failApi({ status: 500, count: 2, method: 'POST', landed: true })
    const results = await Promise.all(
      children(8, {
        WORK: 'ensure',
        ACCOUNT: account,
        TOKENS: JSON.stringify(tokens),
        HOOK_URL: url,
        PREFIX: prefix,
      }),
    )
    service.clearFailures()
    // Some callers may have failed (their create's answer was lost): none crashed.
    expect(results.map((r) => r.code)).toEqual(Array(8).fill(0))
    const mine = subscriptionsIn(prefix, url, tokens)
    const ensured = await mine.ensure(account)
    const active = atUrl(account, url).filter((w) => w.state === 'active')
    expect(active.map((w) => w.id)).toEqual([ensured.webhookId])
    expect((await mine.lookup(ensured.webhookId))?.secret).toBe(active[0]!.secret)
  }
}, 120_000)
