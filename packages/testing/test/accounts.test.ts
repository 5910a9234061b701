// The fake service's accounts and their webhooks: the API per account, deliveries to an
// account's webhooks signed with each one's secret, disabling after failures, the control
// API and dashboard views, and completeOAuthFlow connecting the account it was asked for.
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  constructEvent,
  createOAuthRoutes,
  createSchedulingClient,
  MemoryTokenStore,
} from '@scheduling-kit/core'
import { afterEach, describe, expect, it } from 'vitest'
import { completeOAuthFlow, startFakeSchedulingService } from '../src/index.js'

const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A receiver on loopback that records each delivery and answers `status()`. */
async function receiver(status: () => number = () => 200) {
  const got: Array<{ headers: IncomingMessage['headers']; body: string }> = []
  const server = createServer(async (req, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    got.push({ headers: req.headers, body })
    res.writeHead(status()).end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => new Promise<void>((r) => server.close(() => r())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got }
}

async function service(options: Parameters<typeof startFakeSchedulingService>[0] = {}) {
  const s = await startFakeSchedulingService({ retrySchedule: [], ...options })
  closers.push(() => s.close())
  return s
}

describe('accounts and their webhooks', () => {
  it("an account's event goes to its own webhooks, each signed with its own secret", async () => {
    const s = await service()
    const hook = await receiver()
    const a = createSchedulingClient({
      baseUrl: s.apiUrl,
      token: s.auth.grant('acct_a').access_token,
    })
    const b = createSchedulingClient({
      baseUrl: s.apiUrl,
      token: s.auth.grant('acct_b').access_token,
    })
    const mine = await a.webhooks.create({ url: hook.url })
    const theirs = await b.webhooks.create({ url: hook.url })
    const appWide = s.registerWebhook({ url: hook.url })
    const { event, deliveries } = await s.trigger('event.created', { account: 'acct_a' })
    expect(deliveries.map((d) => d.webhookId)).toEqual([mine.id])
    expect(hook.got).toHaveLength(1)
    const [got] = hook.got
    expect(got!.headers['x-service-webhook-id']).toBe(mine.id)
    const verified = await constructEvent({
      body: got!.body,
      headers: got!.headers,
      secret: mine.secret,
    })
    expect(verified.id).toBe(event.id)
    await expect(
      constructEvent({ body: got!.body, headers: got!.headers, secret: theirs.secret }),
    ).rejects.toMatchObject({ code: 'signature_invalid' })
    // Without an account, the app-wide webhooks get it, as before.
    const legacy = await s.trigger('event.created')
    expect(legacy.deliveries.map((d) => d.webhookId)).toEqual([appWide.id])
    expect(s.webhooks('acct_b').map((w) => w.id)).toEqual([theirs.id])
  })

  it('two webhooks of one account both get an occurrence, under one payload id; or the newest only', async () => {
    for (const each of [true, false]) {
      const s = await service({ deliverToEachWebhook: each })
      const hook = await receiver()
      const first = s.registerWebhook({ url: hook.url, account: 'acct_r' })
      const second = s.registerWebhook({ url: hook.url, account: 'acct_r' })
      const { deliveries } = await s.trigger('event.created', { account: 'acct_r' })
      expect(deliveries.map((d) => d.webhookId)).toEqual(each ? [first.id, second.id] : [second.id])
      expect(new Set(deliveries.map((d) => d.payloadId)).size).toBe(1)
    }
  })

  it('a webhook failing disableAfter times in a row is disabled: no more deliveries, the API says so', async () => {
    const s = await service({ disableAfter: 3, retrySchedule: [5, 5, 5, 5, 5, 5] })
    const hook = await receiver(() => 500)
    const token = s.auth.grant('acct_d').access_token
    const api = createSchedulingClient({ baseUrl: s.apiUrl, token })
    const made = await api.webhooks.create({ url: hook.url })
    await s.trigger('event.created', { account: 'acct_d' })
    await s.idle()
    expect(hook.got).toHaveLength(3)
    expect(await api.webhooks.get(made.id)).toMatchObject({ state: 'disabled' })
    await s.trigger('event.created', { account: 'acct_d' })
    expect(hook.got).toHaveLength(3)
  })

  it('the control API: set a state, make the API fail with 429 and Retry-After, list accounts with their webhooks', async () => {
    const s = await service()
    const token = s.auth.grant('acct_c').access_token
    const api = createSchedulingClient({ baseUrl: s.apiUrl, token, retry: { attempts: 1 } })
    const made = await api.webhooks.create({ url: 'https://app.example.test/h' })
    const post = (path: string, body: unknown) =>
      fetch(`${s.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    expect(
      (await post('/_control/webhooks/state', { id: made.id, state: 'disabled' })).status,
    ).toBe(200)
    expect(s.webhooks('acct_c')[0]!.state).toBe('disabled')
    expect((await post('/_control/api-failures', { status: 429, retryAfter: '7' })).status).toBe(
      200,
    )
    const error = await api.webhooks.get(made.id).catch((e) => e)
    expect(error).toMatchObject({ status: 429, retryAfterMs: 7_000 })
    expect((await post('/_control/api-failures', { status: 200 })).status).toBe(400)
    const accounts = (await (await fetch(`${s.url}/_control/accounts`)).json()) as Array<{
      account: string
      webhooks: Array<{ id: string; secret?: string }>
    }>
    const mine = accounts.find((a) => a.account === 'acct_c')!
    expect(mine.webhooks.map((w) => w.id)).toEqual([made.id])
    expect(mine.webhooks[0]!.secret).toBeUndefined()
    const page = await (await fetch(s.url)).text()
    expect(page).toContain(`data-webhook="${made.id}" data-account="acct_c"`)
    expect(page).toMatch(/<td class="state fail">disabled/)
  })
})

describe('completeOAuthFlow', () => {
  /** An app with the OAuth routes at /auth/scheduling that records the cookies it saw. */
  async function app(autoApprove: boolean) {
    const s = await service({ autoApprove })
    const seen: Array<{ path: string; cookie: string | undefined }> = []
    const store = new MemoryTokenStore()
    let routes: ReturnType<typeof createOAuthRoutes> | undefined
    const server = createServer(async (req, res) => {
      seen.push({ path: (req.url ?? '').split('?')[0]!, cookie: req.headers.cookie })
      const answer = await routes!.fetch(
        new Request(`http://127.0.0.1${req.url}`, { headers: req.headers as HeadersInit }),
        { mountPath: '/auth/scheduling' },
      )
      const headers: Record<string, string | string[]> = {}
      answer.headers.forEach((value, name) => {
        if (name !== 'set-cookie') headers[name] = value
      })
      headers['set-cookie'] = answer.headers.getSetCookie()
      res.writeHead(answer.status, headers)
      res.end(await answer.text())
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    closers.push(() => new Promise<void>((r) => server.close(() => r())))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const settings = s.connectApp(base)
    routes = createOAuthRoutes({
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      redirectUri: settings.redirectUri,
      authUrl: settings.authUrl,
      apiUrl: settings.apiUrl,
      tokenStore: store,
      cookieSecret: 'a-cookie-secret-of-32-characters!!',
    })
    return { base, seen, store }
  }

  it('connects the account asked for, with or without a consent page', async () => {
    for (const autoApprove of [true, false]) {
      const { base, store } = await app(autoApprove)
      await completeOAuthFlow(`${base}/auth/scheduling/login`, { account: 'acct_77' })
      expect(await store.get('acct_77'), `autoApprove ${autoApprove}`).toBeDefined()
      expect(await store.get('acct_1')).toBeUndefined()
    }
  })

  it("carries the app's own cookie on the login and the callback", async () => {
    const { base, seen } = await app(true)
    await completeOAuthFlow(`${base}/auth/scheduling/login`, { cookie: 'sid=s3ss10n' })
    const byPath = Object.fromEntries(seen.map((s) => [s.path, s.cookie]))
    expect(byPath['/auth/scheduling/login']).toBe('sid=s3ss10n')
    expect(byPath['/auth/scheduling/callback']).toMatch(/^sid=s3ss10n; /)
  })
})

describe('scheduling-kit webhooks', () => {
  const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname
  const cli = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'webhooks', ...args], {
        env: { ...process.env, ...env },
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      child.stderr.on('data', (d) => (stderr += d))
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })

  it('create, list (every page), get, delete against the API with a personal access token', async () => {
    const s = await service({ personalAccessTokens: { pat_cli: 'acct_cli' } })
    for (let i = 0; i < 120; i++)
      s.registerWebhook({ url: `https://app.example.test/${i}`, account: 'acct_cli' })
    const env = { SCHEDULING_API_URL: s.apiUrl, SCHEDULING_TOKEN: 'pat_cli' }
    const made = await cli(['create', 'https://app.example.test/new'], env)
    expect(made.code).toBe(0)
    const id = /^(wh_\S+)/m.exec(made.stdout.split('\n')[1]!)![1]!
    expect(made.stdout).toContain(
      `Signing secret (shown this once; store it now): ${s.webhooks('acct_cli').at(-1)!.secret}`,
    )
    const listed = await cli(['list', '--api-url', s.apiUrl, '--token', 'pat_cli'])
    expect(listed.code).toBe(0)
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+STATE\s+CREATED\s+URL$/)
    expect(listed.stdout.trim().split('\n')).toHaveLength(122)
    expect(listed.stdout).not.toContain(s.webhooks('acct_cli')[0]!.secret)
    const json = await cli(['get', id, '--json'], env)
    expect(JSON.parse(json.stdout)).toMatchObject({ id, state: 'active' })
    expect((await cli(['delete', id], env)).stdout.trim()).toBe(`Deleted ${id}.`)
    const missing = await cli(['get', id], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/No webhook wh_\S+ \(404\)/)
  })

  it('says what is wrong: a bad URL (422 names the field), a refused token, missing options', async () => {
    const s = await service({ personalAccessTokens: { pat_cli: 'acct_cli' } })
    const env = { SCHEDULING_API_URL: s.apiUrl, SCHEDULING_TOKEN: 'pat_cli' }
    const bad = await cli(['create', 'ftp://files.example.test/x'], env)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/failed with status 422 .*: url must be a valid URL/)
    const refused = await cli(['list'], { ...env, SCHEDULING_TOKEN: 'pat_wrong' })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/status 401/)
    expect(refused.stderr).toMatch(/Check the token/)
    expect(refused.stderr).not.toContain('pat_wrong')
    expect((await cli(['list'], { SCHEDULING_API_URL: s.apiUrl })).stderr).toMatch(/--token/)
    expect((await cli(['get'], env)).code).toBe(2)
    expect((await cli(['rename', 'x'], env)).stderr).toMatch(/Unknown action "rename"/)
  })
})
