import { execFile, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import {
  type AnyWebhookEvent,
  constructEvent,
  createOAuthClient,
  createSchedulingClient,
  createWebhookHandler,
  EVENT_TYPES,
  isKnownEventType,
  MemorySubscriptionStore,
  MemoryTokenStore,
  parseEnvelope,
} from '@scheduling-kit/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createTestEvent,
  runSubscriptionStoreConformance,
  runTokenStoreConformance,
  signedRequest,
  startFakeSchedulingService,
} from '../src/index.js'

const run = promisify(execFile)
const CLI = new URL('../bin/scheduling-kit.js', import.meta.url).pathname
const closers: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** `scheduling-kit serve --port 0 ...args`, once it printed its address. */
async function serveCli(...args: string[]) {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args])
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const m = /on (http:\/\/\S+)/.exec(d.toString())
      if (m) resolve(m[1]!)
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}`)))
  })
  return { child, url }
}

/** A webhook receiver: core's handler on loopback, failing the first `failures` deliveries. */
async function receiver(secret: string, failures = 0) {
  const events: AnyWebhookEvent[] = []
  let left = failures
  const handler = createWebhookHandler({
    secret,
    onAny: (event) => {
      if (left-- > 0) throw new Error('receiver down')
      events.push(event)
    },
  })
  const server: Server = createServer(async (req, res) => {
    const answer = await handler.handle({
      method: req.method!,
      path: req.url!,
      headers: req.headers,
      body: req,
    })
    if (answer) res.writeHead(answer.status, answer.headers).end(answer.body)
    else res.writeHead(404).end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  closers.push(() => {
    server.closeAllConnections()
    return new Promise<void>((r) => server.close(() => r()))
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/scheduling`,
    events,
  }
}

async function service(options: Parameters<typeof startFakeSchedulingService>[0] = {}) {
  const s = await startFakeSchedulingService(options)
  closers.push(s.close)
  return s
}

describe('createTestEvent', () => {
  it.each(EVENT_TYPES)('builds a realistic %s that parses as itself', (type) => {
    const event = createTestEvent(type)
    expect(parseEnvelope(JSON.stringify(event))).toEqual(event)
    expect(event.type).toBe(type)
    expect(event.id).toMatch(/^payload_[A-Za-z0-9_-]+$/)
    expect(Date.parse(event.occurred_at!)).not.toBeNaN()
    expect(event.payload).toBeTypeOf('object')
    if (type.startsWith('event.')) expect((event.payload as { id: string }).id).toMatch(/^event_/)
  })

  it('sets states as the service does and takes overrides', () => {
    expect(createTestEvent('event.requested').payload?.state).toBe('awaiting_approval')
    expect(createTestEvent('event.canceled').payload?.cancel_reason).toBeTypeOf('string')
    expect(createTestEvent('event.checkout.expired').payload?.state).toBe('checkout_expired')
    const custom = createTestEvent('event.created', {
      id: 'payload_fixed',
      payload: { description: 'Demo' },
    })
    expect(custom.id).toBe('payload_fixed')
    expect(custom.payload?.description).toBe('Demo')
    expect(custom.payload?.attendees).toHaveLength(2)
    expect(createTestEvent('meeting.teleported').type).toBe('meeting.teleported')
    expect(isKnownEventType(createTestEvent('meeting.teleported').type)).toBe(false)
  })

  it('signs requests the way the service does: upper-case hex, both headers', async () => {
    const { body, headers } = await signedRequest(createTestEvent('event.approved'), {
      secret: 's3cret',
      webhookId: 'wh_9',
    })
    expect(headers['x-service-signature']).toMatch(/^sha256=[0-9A-F]{64}$/)
    expect(headers['x-service-webhook-id']).toBe('wh_9')
    expect(headers['user-agent']).toMatch(/Webhooks \(/)
    expect((await constructEvent({ body, headers, secret: 's3cret' })).type).toBe('event.approved')
  })
})

describe('startFakeSchedulingService', () => {
  it('runs the OAuth flow through its consent page, then answers /v1/me for the account', async () => {
    const s = await service()
    const redirectUri = 'http://127.0.0.1:9/auth/scheduling/callback'
    s.allowRedirectUri(redirectUri)
    const oauth = createOAuthClient({
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      redirectUri,
      authUrl: s.authUrl,
    })
    // PKCE, which the service requires: a verifier, and its S256 challenge.
    const verifier = randomBytes(32).toString('base64url')
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url')
    const bare = await fetch(oauth.authorizeUrl({ state: 'st4te' }))
    expect(bare.status).toBe(400)
    expect(await bare.text()).toContain('PKCE is required')
    const page = await fetch(oauth.authorizeUrl({ state: 'st4te', codeChallenge }))
    const html = await page.text()
    expect(html).toContain('id="allow"')
    expect(html).toContain('value="st4te"')
    /** The consent page's answer, as its form posts it: where the browser is sent. */
    const decide = async (decision: 'allow' | 'deny', state: string) => {
      const answer = await fetch(`${s.url}/oauth/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: s.clientId,
          redirect_uri: redirectUri,
          state,
          code_challenge: codeChallenge,
          code_challenge_method: 'S256',
          decision,
          account: 'acct_ada',
        }),
      })
      return new URL(answer.headers.get('location')!)
    }
    const back = await decide('allow', 'st4te')
    expect(back.searchParams.get('state')).toBe('st4te')
    const code = back.searchParams.get('code')!
    // Without the verifier, the code is refused (and spent).
    await expect(oauth.exchangeCode(code)).rejects.toMatchObject({ error: 'invalid_grant' })
    const again = await decide('allow', 'st4te')
    const tokens = await oauth.exchangeCode(again.searchParams.get('code')!, {
      codeVerifier: verifier,
    })
    expect(tokens.expiresAt - tokens.obtainedAt!).toBe(7_200_000)
    const me = await createSchedulingClient({ baseUrl: s.apiUrl, token: tokens.accessToken }).me()
    expect(me).toMatchObject({ id: 'acct_ada' })
    const denied = await decide('deny', 'x')
    expect(denied.searchParams.get('error')).toBe('access_denied')
  })

  it('checks bearer tokens: personal access tokens, expiry and revocation answer 401 with WWW-Authenticate', async () => {
    const s = await service({ personalAccessTokens: { pat_1: 'acct_pat' } })
    expect(await createSchedulingClient({ baseUrl: s.apiUrl, token: 'pat_1' }).me()).toMatchObject({
      id: 'acct_pat',
    })
    const granted = s.auth.grant('acct_x')
    const me = () =>
      fetch(`${s.apiUrl}/me`, { headers: { authorization: `Bearer ${granted.access_token}` } })
    expect((await me()).status).toBe(200)
    s.expireToken(granted.access_token)
    const expired = await me()
    expect(expired.status).toBe(401)
    expect(expired.headers.get('www-authenticate')).toMatch(/^Bearer/)
    const other = s.auth.grant('acct_y')
    s.revokeGrant('acct_y')
    const res = await fetch(`${s.apiUrl}/me`, {
      headers: { authorization: `Bearer ${other.access_token}` },
    })
    expect(res.status).toBe(401)
  })

  it('delivers signed events and retries a failing receiver with backoff until it succeeds, once', async () => {
    const s = await service({ retrySchedule: [20, 40, 80] })
    const r = await receiver('hook-secret', 2)
    const hook = s.registerWebhook({ url: r.url, secret: 'hook-secret' })
    const { event, deliveries } = await s.trigger('event.created')
    expect(deliveries).toMatchObject([{ webhookId: hook.id, attempt: 1, status: 500, ok: false }])
    await s.idle()
    const attempts = s.deliveries().filter((d) => d.payloadId === event.id)
    expect(attempts.map((d) => [d.attempt, d.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 200],
    ])
    expect(r.events.map((e) => e.id)).toEqual([event.id])
  })

  it('gives up after the last retry, and sends only the events a webhook asked for', async () => {
    const s = await service({ retrySchedule: [10] })
    const r = await receiver('other-secret')
    s.registerWebhook({ url: r.url, secret: 'not-what-the-receiver-has' })
    const picky = await receiver('picky')
    s.registerWebhook({ url: picky.url, secret: 'picky', events: ['event.canceled'] })
    await s.trigger('event.created')
    await s.trigger('event.canceled')
    await s.idle()
    expect(s.deliveries().filter((d) => d.status === 401)).toHaveLength(4)
    expect(picky.events.map((e) => e.type)).toEqual(['event.canceled'])
  })
})

describe('startFakeSchedulingService: its control API', () => {
  it('has a control API: register, trigger, expire, inject token failures', async () => {
    const s = await service()
    const r = await receiver('ctl')
    const post = (path: string, body: unknown) =>
      fetch(`${s.url}/_control/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const hook = (await (await post('webhooks', { url: r.url, secret: 'ctl' })).json()) as {
      id: string
    }
    expect(hook.id).toMatch(/^wh_/)
    const triggered = (await (await post('trigger', { type: 'poll.response.created' })).json()) as {
      deliveries: Array<{ status: number }>
    }
    expect(triggered.deliveries[0]!.status).toBe(200)
    expect(r.events.map((e) => e.type)).toEqual(['poll.response.created'])
    await post('failures', { count: 1 })
    const oauth = createOAuthClient({
      clientId: s.clientId,
      clientSecret: s.clientSecret,
      redirectUri: 'http://127.0.0.1:9/callback',
      authUrl: s.authUrl,
    })
    await expect(oauth.refresh(s.auth.grant().refresh_token)).rejects.toMatchObject({ status: 500 })
    expect(((await (await fetch(`${s.url}/_control/deliveries`)).json()) as unknown[]).length).toBe(
      1,
    )
    expect(await (await fetch(s.url)).text()).toContain('class="send">Send</button>')
  })
})

/** A request with the `Host` header given (fetch sets its own): the status. */
function withHost(url: string, host: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method: body === undefined ? 'GET' : 'POST',
        headers: { host, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        res.resume()
        resolve(res.statusCode ?? 0)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

describe("the fake service is this machine's own", () => {
  /** A control request as a browser on another site, or a rebound DNS name, would send it. */
  const control = (s: { url: string }, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}/_control/${path}`, { method: 'POST', ...init })

  it('refuses form bodies, other origins, cross-site fetches and a Host that is not its own', async () => {
    const s = await service()
    const r = await receiver('real-secret')
    const hook = s.registerWebhook({ url: r.url, secret: 'real-secret' })
    const json = { 'content-type': 'application/json' }
    const attempts: Array<[string, RequestInit, number]> = [
      // A cross-site form post: urlencoded, multipart, text/plain.
      [
        'urlencoded',
        {
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'type=event.created',
        },
        415,
      ],
      [
        'multipart',
        {
          body: (() => {
            const f = new FormData()
            f.set('type', 'event.created')
            return f
          })(),
        },
        415,
      ],
      [
        'text/plain',
        { headers: { 'content-type': 'text/plain' }, body: '{"type":"event.created"}' },
        415,
      ],
      [
        'another origin',
        { headers: { ...json, origin: 'https://evil.test' }, body: '{"type":"event.created"}' },
        403,
      ],
      [
        'cross-site',
        { headers: { ...json, 'sec-fetch-site': 'cross-site' }, body: '{"type":"event.created"}' },
        403,
      ],
    ]
    for (const [what, init, status] of attempts) {
      expect((await control(s, 'trigger', init)).status, what).toBe(status)
    }
    // A page on a name that resolves here (DNS rebinding), or on another port.
    const port = new URL(s.url).port
    for (const host of [`evil.test:${port}`, '127.0.0.1:1', `127.0.0.1.nip.test:${port}`]) {
      const trigger = await withHost(s.url, host, '/_control/trigger', '{"type":"event.created"}')
      expect(trigger, host).toBe(403)
      expect(await withHost(s.url, host, '/'), host).toBe(403)
    }
    expect(r.events).toEqual([])
    expect(s.deliveries()).toEqual([])
    expect(hook.id).toMatch(/^wh_/)
    // Its own requests still work: JSON, from its own origin, as the dashboard's buttons send.
    const own = await control(s, 'trigger', {
      headers: { ...json, origin: s.url, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ type: 'event.created' }),
    })
    expect(own.status).toBe(200)
    expect(r.events).toHaveLength(1)
  })

  it('never replaces a webhook by id: its URL and secret stay', async () => {
    const s = await service()
    const r = await receiver('kept')
    const hook = s.registerWebhook({ url: r.url, secret: 'kept' })
    const replaced = await control(s, 'webhooks', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: hook.id, url: 'http://127.0.0.1:9/steal', secret: 'mine' }),
    })
    expect(replaced.status).toBe(409)
    expect(() => s.registerWebhook({ id: hook.id, url: 'http://127.0.0.1:9/x' })).toThrow(/exists/)
    await s.trigger('event.created')
    expect(r.events).toHaveLength(1)
    const bad = await control(s, 'webhooks', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'file:///etc/passwd' }),
    })
    expect(bad.status).toBe(400)
  })

  it('warns loudly when it listens beyond loopback', async () => {
    const warned: string[] = []
    const original = console.warn
    console.warn = (...args: unknown[]) => void warned.push(args.join(' '))
    try {
      const loop = await service()
      expect(warned).toEqual([])
      const wide = await service({ host: '0.0.0.0' })
      expect(warned.join('\n')).toMatch(
        /WARNING: the fake scheduling service listens on 0\.0\.0\.0/,
      )
      expect(loop.url).not.toBe(wide.url)
    } finally {
      console.warn = original
    }
  })
})

const memorySubscriptions = new MemorySubscriptionStore()
runSubscriptionStoreConformance(() => memorySubscriptions, {
  describe,
  it,
  name: 'MemorySubscriptionStore: SubscriptionStore conformance',
})

runTokenStoreConformance(() => new MemoryTokenStore(), {
  describe,
  it,
  name: 'MemoryTokenStore passes the conformance kit',
})

describe('runTokenStoreConformance', () => {
  it('runs under node:test too', async () => {
    const fixture = new URL('./fixtures/node-test-store.mjs', import.meta.url).pathname
    const { stdout } = await run(process.execPath, ['--test', '--test-reporter=tap', fixture])
    expect(stdout).toMatch(/^# pass 12$/m)
    expect(stdout).toMatch(/^# fail 0$/m)
  })

  it('catches a store that shares records by reference', async () => {
    const rows = new Map<string, unknown>()
    const leaky = {
      get: async (k: string) => rows.get(k) as never,
      set: async (k: string, r: unknown) => void rows.set(k, r),
      delete: async (k: string) => void rows.delete(k),
    }
    const tests: Array<[string, () => Promise<void>]> = []
    runTokenStoreConformance(() => leaky, {
      describe: (_n, fn) => fn(),
      it: (n, fn) => void tests.push([n, fn]),
    })
    const results = await Promise.allSettled(tests.map(([, fn]) => fn()))
    const failed = tests.filter((_, i) => results[i]!.status === 'rejected').map(([n]) => n)
    expect(failed).toEqual(['a record read is a copy: changing it does not change the store'])
  })
})

describe('scheduling-kit CLI', () => {
  it('prints help for every command, and exits 2 on bad arguments', async () => {
    for (const command of ['serve', 'trigger', 'sign', 'webhooks']) {
      const { stdout } = await run(process.execPath, [CLI, command, '--help'])
      expect(stdout).toContain(`scheduling-kit ${command}`)
    }
    const bad = await run(process.execPath, [CLI, 'trigger', 'event.created']).catch(
      (e: { code: number; stderr: string }) => e,
    )
    expect(bad).toMatchObject({ code: 2 })
    expect((bad as { stderr: string }).stderr).toMatch(/--url/)
    await expect(run(process.execPath, [CLI, 'nope'])).rejects.toMatchObject({ code: 2 })
    await expect(run(process.execPath, [CLI, 'serve', '--port', 'abc'])).rejects.toMatchObject({
      code: 2,
    })
  })

  it('sign: the header for the bytes on stdin', async () => {
    const child = spawn(process.execPath, [CLI, 'sign', '--secret', 'k'])
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stdin.end('{"type":"event.created","id":"payload_1"}')
    await new Promise((r) => child.on('close', r))
    const { signPayload } = await import('@scheduling-kit/core')
    expect(out.trim()).toBe(await signPayload('{"type":"event.created","id":"payload_1"}', 'k'))
  })

  it('trigger: sends one signed event and exits 0 on 2xx, 1 otherwise', async () => {
    const r = await receiver('cli-secret')
    const ok = await run(process.execPath, [
      CLI,
      'trigger',
      'event.rescheduled',
      '--url',
      r.url,
      '--secret',
      'cli-secret',
    ])
    expect(ok.stdout).toMatch(/event\.rescheduled payload_\S+ -> 200/)
    expect(r.events.map((e) => e.type)).toEqual(['event.rescheduled'])
    const wrong = await run(process.execPath, [
      CLI,
      'trigger',
      'event.created',
      '--url',
      r.url,
      '--secret',
      'wrong',
    ]).catch((e) => e)
    expect(wrong).toMatchObject({ code: 1 })
    expect(wrong.stdout).toMatch(/-> 401/)
  })

  it('trigger --service: a running fake service delivers to its webhooks', async () => {
    const s = await service()
    const r = await receiver('via-service')
    s.registerWebhook({ url: r.url, secret: 'via-service' })
    const { stdout } = await run(process.execPath, [
      CLI,
      'trigger',
      'event.declined',
      '--service',
      s.url,
    ])
    expect(stdout).toMatch(/event\.declined payload_\S+ -> 1 webhook\(s\)/)
    expect(r.events.map((e) => e.type)).toEqual(['event.declined'])
    await expect(
      run(process.execPath, [CLI, 'trigger', 'event.created', '--service', 'http://127.0.0.1:9']),
    ).rejects.toMatchObject({ code: 1 })
  })

  it('trigger --all: one event of each of the 16 types, one line each', async () => {
    const r = await receiver('all-secret')
    const { stdout } = await run(process.execPath, [
      CLI,
      'trigger',
      '--all',
      '--url',
      r.url,
      '--secret',
      'all-secret',
    ])
    expect(r.events.map((e) => e.type)).toEqual([...EVENT_TYPES])
    expect(stdout).toContain('16 of 16 answered 2xx')
    const s = await service()
    const r2 = await receiver('via-service-all')
    s.registerWebhook({ url: r2.url, secret: 'via-service-all' })
    await run(process.execPath, [CLI, 'trigger', '--all', '--service', s.url])
    expect(r2.events.map((e) => e.type)).toEqual([...EVENT_TYPES])
    await expect(
      run(process.execPath, [CLI, 'trigger', 'event.created', '--all', '--service', s.url]),
    ).rejects.toMatchObject({ code: 2 })
  })
})

describe('scheduling-kit CLI: errors and serve', () => {
  it('network errors name the URL tried and why, once', async () => {
    const probe = createServer()
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
    const closed = {
      url: `http://127.0.0.1:${(probe.address() as AddressInfo).port}/webhooks/scheduling`,
    }
    await new Promise<void>((r) => probe.close(() => r()))
    const direct = await run(process.execPath, [
      CLI,
      'trigger',
      '--all',
      '--url',
      closed.url,
      '--secret',
      'x',
    ]).catch((e) => e)
    expect(direct).toMatchObject({ code: 1 })
    expect(direct.stderr.trim()).toBe(
      `Could not reach ${closed.url} (ECONNREFUSED): nothing listens there (is it running, on that port?).`,
    )
    const service = await run(process.execPath, [
      CLI,
      'trigger',
      'event.created',
      '--service',
      new URL(closed.url).origin,
    ]).catch((e) => e)
    expect(service.stderr).toContain(
      `Could not reach ${new URL(closed.url).origin}/_control/trigger (ECONNREFUSED)`,
    )
  })

  it('serve --host: listens on the address given', async () => {
    const { child, url } = await serveCli('--host', '0.0.0.0')
    try {
      expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/)
      const port = new URL(url).port
      // Every interface: loopback answers, by its own address.
      expect((await fetch(`http://127.0.0.1:${port}/_control`)).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.on('exit', r))
    }
  })

  it('serve: runs the fake service until stopped', async () => {
    const { child, url } = await serveCli('--auto-approve')
    try {
      expect(
        ((await (await fetch(`${url}/_control`)).json()) as { webhooks: unknown[] }).webhooks,
      ).toEqual([])
    } finally {
      child.kill('SIGTERM')
      expect(await new Promise((r) => child.on('exit', r))).toBe(0)
    }
  })
})
