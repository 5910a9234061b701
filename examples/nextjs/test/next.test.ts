// The Next.js example as a user deploys it: `next build` where the runtime's environment is
// absent, `next start` with it, then over real HTTP against the fake service: an account
// connects through the OAuth route handlers and gets its own webhook; its event reaches the
// webhook route and the app's table; the cron route refreshes its token off the request path
// and repairs its webhook once the service disables it. A missing variable is told at the
// first request, with the toolkit's message.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import {
  completeOAuthFlow,
  type FakeSchedulingService,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const app = fileURLToPath(new URL('..', import.meta.url))
const next = fileURLToPath(new URL('../node_modules/next/dist/bin/next', import.meta.url))
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `sk_next_${randomBytes(4).toString('hex')}`
const CRON_SECRET = randomBytes(16).toString('hex')

/** Only what a build machine has: no variable of the app's. */
const bare: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  NODE_ENV: 'production',
  NEXT_TELEMETRY_DISABLED: '1',
}

interface Run {
  status: number | null
  output: string
}

/** Runs a command of the app to its end. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: app, env })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk
    })
    child.on('error', reject)
    child.on('close', (status) => resolve({ status, output }))
  })
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

interface Started {
  url: string
  output: () => string
  stop(): Promise<void>
}

/** `next start` on a port of its own, resolved once it says it is ready. */
async function start(env: Record<string, string | undefined>): Promise<Started> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child: ChildProcess = spawn(
    process.execPath,
    [next, 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    { cwd: app, env: { ...bare, APP_URL: url, ...env } },
  )
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk
      if (/Ready in/.test(output)) resolve()
    }
    child.stdout?.on('data', seen)
    child.stderr?.on('data', seen)
    child.on('exit', (code) => reject(new Error(`next start exited (${code}):\n${output}`)))
  })
  return {
    url,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.on('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

let service: FakeSchedulingService
let admin: pg.Pool
let built: Run
const started: Started[] = []

/** The environment of a deployment against the fake service and this run's schema. */
function deployment(): Record<string, string | undefined> {
  return {
    SCHEDULING_CLIENT_ID: service.clientId,
    SCHEDULING_CLIENT_SECRET: service.clientSecret,
    SCHEDULING_AUTH_URL: service.authUrl,
    SCHEDULING_API_URL: service.apiUrl,
    COOKIE_SECRET: randomBytes(32).toString('base64url'),
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    CRON_SECRET,
    // Short periods, so the cron route's work shows within a test.
    SWEEP_PERIOD_MS: '3000',
    REFRESH_EVERY_MS: '3000',
    // A step covers a quarter of them: a step's own time (tens of ms, more on a busy machine)
    // stays below what it covers, so the cron's calls keep up at any load.
    PERIODIC_STEP_MS: '750',
  }
}

beforeAll(async () => {
  service = await startFakeSchedulingService({ autoApprove: true, retrySchedule: [200] })
  admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
  built = await run([next, 'build'], bare)
  const migrated = await run(['--import', 'tsx', 'scripts/migrate.ts'], {
    ...bare,
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
  })
  expect(migrated.output).toContain(`migrated: schema ${schema}`)
}, 600_000)

afterAll(async () => {
  for (const one of started) await one.stop()
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin?.end()
  await service?.close()
})

describe('the Next.js example', () => {
  it('builds with no variable of the app set', () => {
    expect(built.output).not.toMatch(/invalid_options|Error:/)
    expect(built.status).toBe(0)
    for (const route of ['/webhooks/scheduling', '/auth/scheduling/[route]', '/api/cron'])
      expect(built.output).toContain(route)
  })

  it("tells a missing variable at the first request, with the toolkit's message", async () => {
    const { SCHEDULING_API_URL: _, ...withoutApi } = deployment()
    const server = await start(withoutApi)
    started.push(server)
    const login = await fetch(`${server.url}/auth/scheduling/login`, { redirect: 'manual' })
    expect(login.status).toBe(500)
    expect(await login.text()).not.toContain(withoutApi.SCHEDULING_CLIENT_SECRET!)
    expect(server.output()).toContain('createScheduling: apiUrl is the API address')
    expect(server.output()).not.toContain(withoutApi.SCHEDULING_CLIENT_SECRET!)
    await server.stop()
  })

  it('connects an account, delivers its events, and runs the periodic work from the cron route', async () => {
    const server = await start(deployment())
    started.push(server)
    const { url } = server
    service.allowRedirectUri(`${url}/auth/scheduling/callback`)
    const account = 'acct_next'
    const { cookie } = await completeOAuthFlow(`${url}/auth/scheduling/login`, { account })
    const hooks = service.webhooks(account).filter((w) => w.url === `${url}/webhooks/scheduling`)
    expect(hooks.map((w) => w.state)).toEqual(['active'])

    // An event of the account reaches the webhook route on its first attempt, and the table.
    const created = await service.trigger('event.created', { account })
    expect(created.deliveries.map((d) => d.status)).toEqual([200])
    const { rows } = await admin.query(
      `SELECT account, type FROM "${schema}".bookings WHERE payload_id = $1`,
      [created.event.id],
    )
    expect(rows).toEqual([{ account, type: 'event.created' }])
    const page = await (await fetch(url, { headers: { cookie } })).text()
    expect(page).toContain(account)
    expect(page).toContain('event.created')

    // The cron route: refused without the platform's secret.
    expect((await fetch(`${url}/api/cron`)).status).toBe(401)
    const wrong = await fetch(`${url}/api/cron`, { headers: { authorization: 'Bearer nope' } })
    expect(wrong.status).toBe(401)
    const cron = async () => {
      const answer = await fetch(`${url}/api/cron`, {
        headers: { authorization: `Bearer ${CRON_SECRET}` },
      })
      expect(answer.status).toBe(200)
      return (await answer.json()) as {
        behindMs: number
        tasks: Record<string, { steps: number; behindMs: number }>
      }
    }
    const first = await cron()
    expect(Object.keys(first.tasks).sort()).toEqual(['refreshAhead', 'sweep'])
    for (const task of Object.values(first.tasks)) expect(task.steps).toBeGreaterThan(0)

    // The token is refreshed by the cron route's calls, before any request needs it.
    const refreshes = service.auth.counters.refresh
    const disabled = hooks[0]!.id
    service.setWebhookState(disabled, 'disabled')
    let calls = 0
    const repaired = () =>
      service.webhooks(account).some((w) => w.id !== disabled && w.state === 'active')
    // Waits for the events, each call a step of the cron's work (a bound on calls, not time).
    while ((service.auth.counters.refresh === refreshes || !repaired()) && calls < 400) {
      // Each call keeps the work within a period of now, however long the calls take.
      expect((await cron()).behindMs).toBeLessThan(3000)
      calls++
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(service.auth.counters.refresh).toBeGreaterThan(refreshes)
    expect(repaired()).toBe(true)
    // The repaired webhook delivers again.
    const after = await service.trigger('event.rescheduled', { account })
    expect(after.deliveries.map((d) => d.status)).toEqual([200])

    // Readiness: the stores answer and the periodic work is not behind.
    const health = await fetch(`${url}/api/health`)
    expect(health.status).toBe(200)
    expect(server.output()).not.toContain(CRON_SECRET)
    await server.stop()
  }, 300_000)
})
