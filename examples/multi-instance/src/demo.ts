// pnpm demo:multi: three instances of the app behind a round-robin proxy and one worker
// process, sharing Redis for tokens, sign-in states, webhook dedupe and the queue; with
// `--postgres`, sharing one PostgreSQL database for all of it instead, no Redis running (the
// queue is @scheduling-kit/postgres-queue). Connects an
// account (login and callback on different instances), races the token refresh across all
// three, sends a storm of deliveries with replays, connects more accounts (each its own
// webhook) and has every instance reconcile them at once, and ends with a summary table.
import { type ChildProcess, fork } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  type AnyWebhookEvent,
  createCredentialCipher,
  type TokenRecord,
} from '@scheduling-kit/express'
import {
  completeOAuthFlow,
  createTestEvent,
  sendTestEvent,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import { ensureServices } from '../../../scripts/services.mjs'
import { type Config, toEnv } from './config.js'
import { type DemoData, PostgresData, RedisData } from './data.js'
import { startProxy } from './proxy.js'

const INSTANCES = 3
const EXPIRIES = 3
const CALLERS = 300
const DELIVERIES = 600
const REPLAYS = 150

const rows: Array<[string, string, string]> = []
/**
 * One line of the summary. A failed check prints `seen`, what it saw (statuses, answers,
 * errors), so that a failure tells a bug from a loaded machine.
 */
const check = (what: string, expected: unknown, got: unknown, seen: () => unknown[] = () => []) => {
  rows.push([what, String(expected), String(got)])
  const ok = String(expected) === String(got)
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${got}`)
  if (!ok)
    for (const line of seen().slice(0, 10)) console.log(`       saw: ${String(line).slice(0, 300)}`)
}

async function until(what: string, test: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const postgres = process.argv.includes('--postgres') || process.env.DEMO_BACKEND === 'postgres'

const children: ChildProcess[] = []
function start(file: string, env: Record<string, string>): Promise<{ port?: number }> {
  const child = fork(new URL(file, import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  return new Promise((resolve, reject) => {
    child.once('message', (message: { port?: number }) => resolve(message))
    child.once('exit', (code) => reject(new Error(`${file} exited (${code}) before it was ready`)))
  })
}

const services = await ensureServices(postgres ? { redis: false } : { postgres: false })
const redisUrl = services.env.REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const databaseUrl =
  services.env.DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const service = await startFakeSchedulingService({ retrySchedule: [200, 400, 800, 1_600, 3_200] })
const proxy = await startProxy()
const run = randomBytes(4).toString('hex')
const credentialKeys = `demo-1:${randomBytes(32).toString('base64url')}`
const keyList = credentialKeys.split(',').map((entry) => entry.split(':'))
const cipher = createCredentialCipher({
  keys: Object.fromEntries(keyList),
  current: keyList[0]![0]!,
})
const backend: Pick<Config, 'backend' | 'redisUrl' | 'databaseUrl' | 'schema'> = postgres
  ? { backend: 'postgres', redisUrl: '', databaseUrl, schema: `demo_${run}` }
  : { backend: 'redis', redisUrl, databaseUrl: '', schema: '' }
const data: DemoData = postgres
  ? new PostgresData(backend, cipher)
  : new RedisData({ redisUrl, prefix: `demo:${run}:` }, cipher)
try {
  if (data instanceof PostgresData) await data.setUp()
  const settings = service.connectApp(proxy.url)
  const shared: Partial<Config> = {
    ...backend,
    publicUrl: proxy.url,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    authUrl: settings.authUrl,
    apiUrl: settings.apiUrl,
    webhookSecret: settings.webhookSecret,
    cookieSecret: randomBytes(32).toString('hex'),
    credentialKeys,
    queueName: `demo-${run}`,
    prefix: `demo:${run}:`,
  }
  console.log(
    `Fake scheduling service on ${service.url}; load balancer on ${proxy.url}; ${postgres ? `PostgreSQL ${databaseUrl} (schema ${backend.schema}), no Redis` : `Redis ${redisUrl}`}`,
  )
  const ports = await Promise.all(
    Array.from({ length: INSTANCES }, (_, i) =>
      start('./app.ts', toEnv({ ...shared, instance: `app-${i + 1}` })).then((m) => m.port!),
    ),
  )
  proxy.setTargets(ports)
  await start('./worker.ts', toEnv({ ...shared, instance: 'worker' }))
  console.log(`${INSTANCES} app instances on ports ${ports.join(', ')}, and a worker process\n`)

  // 0. Every instance says it is ready: Redis (or PostgreSQL) answers for its stores, its
  // ledger and its queue, in one health report. Like a load balancer, the demo asks again
  // while an instance answers 503 (a pool still connecting on a busy machine), for up to 30 s.
  const ready = await Promise.all(
    ports.map(async (port) => {
      const deadline = Date.now() + 30_000
      for (;;) {
        const res = await fetch(`http://127.0.0.1:${port}/ready`)
        const report = (await res.json()) as {
          checks: Array<{ name: string; ok: boolean; detail?: string }>
        }
        const parts = new Set(report.checks.map((c) => c.name.split('.')[0]))
        if (res.status === 200 || Date.now() > deadline) {
          for (const failed of report.checks.filter((c) => !c.ok))
            console.log(`  port ${port} not ready: ${failed.name}: ${failed.detail ?? ''}`)
          return { status: res.status, parts }
        }
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }),
  )
  check(
    'instances ready (GET /ready answered 200)',
    INSTANCES,
    ready.filter((r) => r.status === 200).length,
  )
  check(
    '  readiness covers tokens, subscriptions, ledger, queue',
    'ledger queue subscriptions tokens',
    [...(ready[0]?.parts ?? [])].sort().join(' '),
  )

  // 1. Connect: the login reaches one instance, the callback the next.
  const { cookie, callback } = await completeOAuthFlow(`${proxy.url}/auth/scheduling/login`)
  check('connected: callback redirected back to the app', 302, callback.status)
  const { tokens } = data

  // 2. The refresh race: the token expires; 300 callers spread over the three instances.
  let refreshesPerExpiry: number[] = []
  let failedCalls = 0
  const failures: string[] = []
  for (let round = 0; round < EXPIRIES; round++) {
    const key = (await data.tokenKeys())[0]!
    // Expired over the version read: a background refresh (a reconcile) that wrote newer
    // tokens meanwhile is not rolled back (the token manager would refuse the older tokens).
    let record: TokenRecord
    for (;;) {
      const { version, ...current } = (await tokens.get(key))!
      record = current
      const expired = { ...current, expiresAt: Date.now() - 1_000 }
      if (tokens.compareAndSet === undefined) {
        await tokens.set(key, expired)
        break
      }
      if (await tokens.compareAndSet(key, expired, version)) break
    }
    service.expireToken(record.accessToken)
    const before = service.auth.counters.refresh
    const answers = await Promise.all(
      Array.from({ length: CALLERS }, () => fetch(`${proxy.url}/api/me`, { headers: { cookie } })),
    )
    for (const answer of answers.filter((a) => a.status !== 200)) {
      failedCalls++
      failures.push(
        `${answer.status} from ${answer.headers.get('x-instance')}: ${(await answer.text()).replace(/\s+/g, ' ')}`,
      )
    }
    const instances = new Set(answers.map((a) => a.headers.get('x-instance')))
    if (instances.size !== INSTANCES)
      throw new Error(`the calls reached ${instances.size} instances`)
    refreshesPerExpiry = [...refreshesPerExpiry, service.auth.counters.refresh - before]
  }
  check(
    `token refreshes for each of ${EXPIRIES} expiries`,
    Array(EXPIRIES).fill(1).join(' '),
    refreshesPerExpiry.join(' '),
  )
  check(`API calls failed (of ${EXPIRIES * CALLERS})`, 0, failedCalls, () => failures)

  // 3. The delivery storm: signed deliveries, some replayed to another instance.
  const sent: AnyWebhookEvent['id'][] = []
  let next = 0
  await Promise.all(
    Array.from({ length: 30 }, async () => {
      while (next < DELIVERIES) {
        next++
        const { event } = await service.trigger('event.created')
        sent.push(event.id)
      }
    }),
  )
  let duplicates = 0
  for (const id of sent.slice(0, REPLAYS)) {
    const replay = createTestEvent('event.created', { id })
    const res = await sendTestEvent(`${proxy.url}/webhooks/scheduling`, replay, {
      secret: settings.webhookSecret,
      webhookId: settings.webhookId,
    })
    if (res.status === 200 && JSON.parse(res.body).duplicate === true) duplicates++
  }
  await service.idle()
  await until(
    'the worker to handle every delivery',
    async () => (await data.handled()).length >= DELIVERIES,
  )
  await new Promise((r) => setTimeout(r, 300)) // room for a second run of anything, to be counted
  const handled = await data.handled()
  check(
    'deliveries answered 200 (first attempt)',
    DELIVERIES,
    service.deliveries().filter((d) => d.ok).length,
    () =>
      service
        .deliveries()
        .filter((d) => !d.ok)
        .map((d) => `${d.payloadId} attempt ${d.attempt}: ${d.status ?? d.error}`),
  )
  check(`replays answered as duplicates (of ${REPLAYS})`, REPLAYS, duplicates)
  check('events handled by the worker', DELIVERIES, new Set(handled).size)
  check('events handled twice', 0, handled.length - new Set(handled).size)
  check('events lost', 0, sent.filter((id) => !handled.includes(id)).length)

  // 4. Connected accounts' webhooks: two more accounts connect; the service disables one
  // webhook and loses another; all three instances reconcile at the same moment.
  for (const account of ['acct_2', 'acct_3'])
    await completeOAuthFlow(`${proxy.url}/auth/scheduling/login`, { account })
  const accountsUrl = `${proxy.url}/webhooks/accounts`
  const accountHooks = (account: string) =>
    service.webhooks(account).filter((w) => w.url === accountsUrl)
  check(
    'connected accounts with their own webhook',
    '1 1 1',
    ['acct_1', 'acct_2', 'acct_3'].map((a) => accountHooks(a).length).join(' '),
  )
  service.setWebhookState(accountHooks('acct_2')[0]!.id, 'disabled')
  service.dropWebhook(accountHooks('acct_3')[0]!.id)
  const reports = await Promise.all(
    children.slice(0, INSTANCES).map(
      (child) =>
        new Promise<{ report?: { created: number; busy: string[] }; error?: string }>((resolve) => {
          const answer = (message: { type?: string }) => {
            if (message?.type !== 'reconciled') return
            child.off('message', answer)
            resolve(message as never)
          }
          child.on('message', answer)
          child.send({ type: 'reconcile' })
        }),
    ),
  )
  check('reconcile runs that failed', 0, reports.filter((r) => r.error !== undefined).length)
  check(
    'webhooks created by the three runs together',
    2,
    reports.reduce((sum, r) => sum + (r.report?.created ?? 0), 0),
  )
  check(
    'active webhooks per account afterwards',
    '1 1 1',
    ['acct_1', 'acct_2', 'acct_3']
      .map((a) => accountHooks(a).filter((w) => w.state === 'active').length)
      .join(' '),
  )
  for (const account of ['acct_1', 'acct_2', 'acct_3'])
    await service.trigger('event.created', { account })
  await until(
    "the worker to handle the accounts' events",
    async () => (await data.handledByAccount()).length >= 3,
  )
  const attributed = (await data.handledByAccount()).map((line) => line.split(' ')[0])
  check('events handled, by account', 'acct_1 acct_2 acct_3', attributed.sort().join(' '))

  // 6. At rest: every token and webhook secret, looked for in everything stored for the app.
  const secrets: string[] = []
  for await (const account of data.subscriptions.keys?.() ?? []) {
    for (const w of (await data.subscriptions.get(account))?.webhooks ?? []) secrets.push(w.secret)
  }
  for (const key of await data.tokenKeys()) {
    const record = await tokens.get(key)
    if (record !== undefined) secrets.push(record.accessToken, record.refreshToken)
  }
  const dump = await data.dump()
  const shown = secrets.filter((secret) =>
    [secret, Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('hex')].some(
      (form) => dump.includes(form),
    ),
  )
  check(
    `tokens and secrets in ${postgres ? 'PostgreSQL' : 'Redis'} in the clear (of ${secrets.length})`,
    0,
    shown.length,
  )
} finally {
  for (const child of children) child.kill()
  await Promise.all(
    children.map((c) => c.exitCode === null && new Promise((r) => c.once('exit', r))),
  )
  await data.close()
  proxy.server.closeAllConnections()
  proxy.server.close()
  await service.close()
  await services.stop()
}

const width = Math.max(...rows.map((r) => r[0].length))
console.log(`\n${'check'.padEnd(width)}  ${'expected'.padEnd(12)}  got`)
for (const [what, expected, got] of rows) {
  console.log(
    `${what.padEnd(width)}  ${expected.padEnd(12)}  ${got}${expected === got ? '' : '   <-- unexpected'}`,
  )
}
const ok = rows.every(([, e, g]) => e === g)
console.log(
  ok ? '\nDemo finished: every check as expected.' : '\nDemo finished with unexpected results.',
)
process.exitCode = ok ? 0 : 1
