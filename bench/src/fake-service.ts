// The fake service at scale: accounts with a personal token and a webhook each, then
// `GET /v1/webhooks` for accounts spread over the range, over real HTTP on one keep-alive
// connection. Printed: heap per account (after a collection), the time to list one account's
// webhooks at 1,000 and at 1,000,000 accounts (median of rounds, p99), and the records each list
// read. Target: a list at a million accounts at most 1.5x its time at a thousand (linear cost:
// a scan of every webhook made it 1,000x). Each size runs in a process of its own, so the
// heap it measures is its own.
import { spawnSync } from 'node:child_process'
import { Agent, request } from 'node:http'
import { startFakeSchedulingService } from '@scheduling-kit/testing'
import { median, quantile, type Target } from './harness.js'

const SIZES = (process.env.BENCH_FAKE_ACCOUNTS ?? '1000,1000000').split(',').map(Number)
const LISTS = 2_000
const ROUNDS = 5

interface SizeResult {
  accounts: number
  bytesPerAccount: number
  setupMs: number
  listMs: number
  p99Ms: number
  examinedPerList: number
}

/** Lists `account`'s webhooks; resolves with the status. */
function list(base: URL, agent: Agent, account: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: `${base.pathname}/webhooks`,
        agent,
        headers: { authorization: `Bearer pat_${account}` },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode!))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** One size, in this process: what the child prints as one JSON line. */
async function measure(accounts: number): Promise<SizeResult> {
  const gc = (globalThis as { gc?: () => void }).gc!
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  const service = await startFakeSchedulingService({ retrySchedule: [] })
  const setupStarted = performance.now()
  for (let i = 0; i < accounts; i++) {
    service.auth.addPersonalAccessToken(`pat_${i}`, `acct_${i}`)
    service.registerWebhook({ url: 'http://127.0.0.1:9/hook', account: `acct_${i}`, id: `wh_${i}` })
  }
  const setupMs = performance.now() - setupStarted
  gc()
  const bytesPerAccount = (process.memoryUsage().heapUsed - heapBefore) / accounts
  const base = new URL(service.apiUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const examinedBefore = service.api.examined
  const perRound: number[] = []
  const times: number[] = []
  let n = 0
  for (let round = 0; round <= ROUNDS; round++) {
    const started = performance.now()
    for (let i = 0; i < LISTS; i++) {
      const account = (n++ * 7_919 + 13) % accounts
      const t = performance.now()
      const status = await list(base, agent, account)
      if (status !== 200) throw new Error(`listed ${status}`)
      if (round > 0) times.push(performance.now() - t)
    }
    // Round 0 warms the server and the client.
    if (round > 0) perRound.push((performance.now() - started) / LISTS)
  }
  const examinedPerList = (service.api.examined - examinedBefore) / ((ROUNDS + 1) * LISTS)
  agent.destroy()
  await service.close()
  times.sort((a, b) => a - b)
  return {
    accounts,
    bytesPerAccount,
    setupMs,
    listMs: median(perRound),
    p99Ms: quantile(times, 0.99),
    examinedPerList,
  }
}

export function fakeServiceBench(): Target[] {
  const results = SIZES.map((accounts) => {
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname, String(accounts)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
    )
    if (child.status !== 0) throw new Error(`the fake service bench at ${accounts} failed`)
    return JSON.parse(child.stdout.trim().split('\n').pop()!) as SizeResult
  })
  console.log(
    `\nThe fake service: an account with a personal token and a webhook; GET /v1/webhooks for ${LISTS} accounts spread over the range, ${ROUNDS} rounds on one keep-alive connection`,
  )
  console.log(
    '| accounts | heap per account | made in | list (median of rounds) | p99 | records read a list |',
  )
  console.log('|---:|---:|---:|---:|---:|---:|')
  for (const r of results)
    console.log(
      `| ${r.accounts.toLocaleString('en-US')} | ${Math.round(r.bytesPerAccount)} B | ${(r.setupMs / 1000).toFixed(1)} s | ${(r.listMs * 1000).toFixed(0)} us | ${(r.p99Ms * 1000).toFixed(0)} us | ${r.examinedPerList} |`,
    )
  const small = results[0]!
  const large = results.at(-1)!
  return [
    {
      what: `fake service: a list at ${large.accounts.toLocaleString('en-US')} accounts / at ${small.accounts.toLocaleString('en-US')}`,
      ratio: large.listMs / small.listMs,
      limit: 1.5,
      kind: 'max',
    },
  ]
}

if (process.argv[2] !== undefined && import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measure(Number(process.argv[2]))))
}
