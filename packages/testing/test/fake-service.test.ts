// The fake service's round-4 switches and manners, each over real HTTP: failures that can be
// cleared, PKCE optional on request, a reused code revoking its grant (RFC 6749 4.1.2),
// client_secret_basic, a malformed cursor refused, reuseGraceMs, and deliveries that say why
// they failed (the system's reason, not a bare "fetch failed") in the log and the dashboard.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type FakeSchedulingService, startFakeSchedulingService } from '../src/index.js'

const services: FakeSchedulingService[] = []
afterEach(async () => {
  for (const s of services.splice(0)) await s.close()
})
async function service(options: Parameters<typeof startFakeSchedulingService>[0] = {}) {
  const s = await startFakeSchedulingService({ retrySchedule: [], ...options })
  services.push(s)
  return s
}

const REDIRECT = 'http://127.0.0.1:9/callback'

async function token(s: FakeSchedulingService, form: Record<string, string>, headers = {}) {
  const res = await fetch(`${s.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  })
  return { status: res.status, body: (await res.json()) as Record<string, string> }
}

const codeForm = (s: FakeSchedulingService, code: string) => ({
  grant_type: 'authorization_code',
  code,
  redirect_uri: REDIRECT,
  client_id: s.clientId,
  client_secret: s.clientSecret,
})

describe('the fake service, round 4', () => {
  it('an API failure storm is cleared by failApi({ count: 0 }) and by clearFailures()', async () => {
    const s = await service({ personalAccessTokens: { pat_1: 'acct_1' } })
    const list = () =>
      fetch(`${s.apiUrl}/webhooks`, { headers: { authorization: 'Bearer pat_1' } }).then(
        (r) => r.status,
      )
    s.failApi({ status: 429, count: 1000, retryAfter: '1' })
    expect(await list()).toBe(429)
    s.failApi({ status: 429, count: 0 })
    expect(await list()).toBe(200)
    s.failApi({ status: 503, count: 50, method: 'GET' })
    s.auth.failNext(500, 500)
    s.clearFailures()
    expect(await list()).toBe(200)
    const tokens = await token(s, codeForm(s, s.auth.issueCode('acct_1', REDIRECT)))
    expect(tokens.status).toBe(200)
    // Through the control API too.
    s.failApi({ status: 500, count: 5 })
    const cleared = await fetch(`${s.url}/_control/failures`, { method: 'DELETE' })
    expect(cleared.status).toBe(200)
    expect(await list()).toBe(200)
  })

  it("pkce: 'optional' accepts the spec's own authorization request; the default refuses it", async () => {
    const authorize = (s: FakeSchedulingService) =>
      fetch(
        `${s.url}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: s.clientId, redirect_uri: REDIRECT, state: 'st' })}`,
        { redirect: 'manual' },
      )
    const strict = await service({ autoApprove: true, redirectUris: [REDIRECT] })
    expect((await authorize(strict)).status).toBe(400)
    const optional = await service({
      autoApprove: true,
      redirectUris: [REDIRECT],
      pkce: 'optional',
    })
    const answer = await authorize(optional)
    expect(answer.status).toBe(302)
    const code = new URL(answer.headers.get('location')!).searchParams.get('code')!
    expect((await token(optional, codeForm(optional, code))).status).toBe(200)
    await expect(service({ pkce: 'sometimes' as never })).rejects.toThrow(/pkce must be/)
  })

  it('a code presented again revokes the grant issued from it (RFC 6749 4.1.2)', async () => {
    const s = await service()
    const code = s.auth.issueCode('acct_1', REDIRECT)
    const first = await token(s, codeForm(s, code))
    expect(first.status).toBe(200)
    const me = () =>
      fetch(`${s.apiUrl}/me`, { headers: { authorization: `Bearer ${first.body.access_token}` } })
    expect((await me()).status).toBe(200)
    const again = await token(s, codeForm(s, code))
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant'])
    expect((await me()).status).toBe(401)
    const refresh = await token(s, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
      client_id: s.clientId,
      client_secret: s.clientSecret,
    })
    expect(refresh.body.error).toBe('invalid_grant')
    expect(s.auth.counters.codeReuse).toBe(1)
  })

  it('client_secret_basic is accepted; Basic and a body secret at once are refused', async () => {
    const s = await service()
    const basic = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`
    const {
      client_secret: _,
      client_id: __,
      ...form
    } = codeForm(s, s.auth.issueCode('acct_1', REDIRECT))
    const ok = await token(s, form, { authorization: basic(s.clientId, s.clientSecret) })
    expect(ok.status).toBe(200)
    const wrong = await token(s, codeForm(s, 'x'), { authorization: basic(s.clientId, 'nope') })
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_request'])
    const bad = await token(s, form, { authorization: basic(s.clientId, 'nope') })
    expect([bad.status, bad.body.error]).toEqual([401, 'invalid_client'])
  })

  it('a cursor the API never gave answers 400', async () => {
    const s = await service({ personalAccessTokens: { pat_1: 'acct_1' } })
    for (const query of [
      'after=garbage',
      'before=%00%00',
      `after=${Buffer.from('c:x').toString('base64url')}`,
    ]) {
      const res = await fetch(`${s.apiUrl}/webhooks?${query}`, {
        headers: { authorization: 'Bearer pat_1' },
      })
      expect(res.status, query).toBe(400)
      expect(((await res.json()) as { error: string }).error).toBe('invalid_cursor')
    }
  })

  it('reuseGraceMs reaches the token endpoint', async () => {
    const s = await service({ reuseGraceMs: 60_000 })
    const granted = s.auth.grant('acct_1')
    const form = {
      grant_type: 'refresh_token',
      refresh_token: granted.refresh_token,
      client_id: s.clientId,
      client_secret: s.clientSecret,
    }
    expect((await token(s, form)).status).toBe(200)
    expect((await token(s, form)).status).toBe(200)
    expect(s.auth.counters.graceReuse).toBe(1)
  })

  it('a failed delivery says why: the connection refused with its address, a time-out', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const hanging = createServer(() => {})
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r))
    try {
      const s = await service({ deliveryTimeoutMs: 300 })
      const refused = s.registerWebhook({ url: `http://127.0.0.1:${port}/hook` })
      const slow = s.registerWebhook({
        url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`,
      })
      await s.trigger('event.created', { webhookId: refused.id } as never)
      await s.trigger('event.created', { webhookId: slow.id } as never)
      const errors = s.deliveries().map((d) => d.error)
      expect(errors[0]).toMatch(new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`))
      expect(errors[1]).toMatch(/no answer within 300 ms \(time-out\)/)
      const page = await fetch(`${s.url}/`).then((r) => r.text())
      expect(page).toContain('ECONNREFUSED')
    } finally {
      hanging.closeAllConnections()
      hanging.close()
    }
  })

  it('redeliver sends the same payload again, signed anew; each attempt keeps its request and answer; the dashboard shows them escaped, with a Redeliver button', async () => {
    const received: { id: string; signature: string }[] = []
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        received.push({
          id: JSON.parse(body).id,
          signature: String(req.headers['x-service-signature']),
        })
        res
          .writeHead(received.length === 1 ? 500 : 200, { 'content-type': 'text/plain' })
          .end('<b>answer</b>')
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const s = await service()
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      s.registerWebhook({ url })
      const { deliveries } = await s.trigger('event.created', {
        payload: { description: '<script>x</script>' },
      })
      const first = deliveries[0]!
      expect(first.status).toBe(500)
      expect(first.request?.body).toContain('<script>x</script>')
      expect(first.request?.headers['x-service-signature']).toMatch(/^sha256=/)
      expect(first.answer).toBe('<b>answer</b>')
      // Through the control API, as the dashboard's button does.
      const res = await fetch(`${s.url}/_control/redeliver`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ deliveryId: first.deliveryId }),
      })
      expect(res.status).toBe(200)
      const again = (await res.json()) as { deliveryId: string; status: number; payloadId: string }
      expect(again.status).toBe(200)
      expect(again.payloadId).toBe(first.payloadId)
      expect(again.deliveryId).not.toBe(first.deliveryId)
      expect(received.map((r) => r.id)).toEqual([first.payloadId, first.payloadId])
      expect(
        (
          await fetch(`${s.url}/_control/redeliver`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"deliveryId":"dlv_nope"}',
          })
        ).status,
      ).toBe(404)
      const page = await (await fetch(s.url)).text()
      expect(page).toContain(`data-delivery="${first.deliveryId}"`)
      expect(page).toContain('class="redeliver"')
      expect(page).toContain('&lt;script&gt;x&lt;/script&gt;')
      expect(page).toContain('&lt;b&gt;answer&lt;/b&gt;')
      expect(page).not.toContain('<script>x</script>')
    } finally {
      receiver.closeAllConnections()
      receiver.close()
    }
  })
})
