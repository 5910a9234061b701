// First-use traps of the OAuth routes, each with the message a new user needs: a sign-in on
// another port of the redirect URI's host (cookies ignore ports: no warning), the state cookie's
// path spelled as the redirect URI spells the mount (not as the request did), and an HTTPS site
// whose redirectUri says http: (told once).
import { describe, expect, it } from 'vitest'
import type { OAuthRequest, OAuthRoutesOptions } from '../../src/oauth/options.js'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

// A date of today (UTC): a delivery's time within any horizon the handler refuses past (maxAgeMs).
const TODAY = new Date().toISOString().slice(0, 10)

function routes(overrides: Partial<OAuthRoutesOptions> = {}) {
  const lines: string[] = []
  const logger = { debug() {}, info() {}, error() {}, warn: (l: string) => void lines.push(l) }
  const r = createOAuthRoutes({
    clientId: 'client_1',
    clientSecret: 'secret_1',
    authUrl: 'http://127.0.0.1:9',
    redirectUri: 'http://127.0.0.1:3000/auth/scheduling/callback',
    tokenStore: new MemoryTokenStore(),
    cookieSecret: 'cookie-secret-0123456789abcdef0123456789',
    logger,
    ...overrides,
  })
  return { r, lines }
}

const login = (more: Partial<OAuthRequest> = {}): OAuthRequest => ({
  method: 'GET',
  path: '/login',
  headers: { host: '127.0.0.1:3000' },
  mountPath: '/auth/scheduling',
  raw: undefined,
  ...more,
})

const setCookies = (headers: Record<string, string | string[]>) =>
  ([] as string[]).concat(headers['set-cookie'] ?? [])

describe('first-use traps of the OAuth routes', () => {
  it('a sign-in on another port of the same host is not warned about (cookies ignore ports)', async () => {
    const { r, lines } = routes()
    await r.handle(login({ headers: { host: '127.0.0.1:4000' } }))
    expect(lines).toEqual([])
    // Another host name still is: 127.0.0.1 and localhost do not share cookies.
    await r.handle(login({ headers: { host: 'localhost:3000' } }))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/started on localhost, but the redirect URI is on 127\.0\.0\.1/)
  })

  it("the state cookie's path is the redirect URI's mount, whatever the request's spelling", async () => {
    const { r } = routes()
    for (const mountPath of ['/auth/scheduling', '/AUTH/Scheduling', '/auth/%73cheduling']) {
      const answer = await r.handle(login({ mountPath }))
      expect(answer?.status).toBe(302)
      const [cookie] = setCookies(answer!.headers)
      expect(cookie, mountPath).toMatch(/; Path=\/auth\/scheduling;/)
    }
    // A failed callback clears it at the same path.
    const failed = await r.handle(
      login({ path: '/callback?code=c&state=s', mountPath: '/AUTH/Scheduling' }),
    )
    expect(setCookies(failed!.headers)[0]).toMatch(/; Path=\/auth\/scheduling;/)
  })

  it('an HTTPS sign-in while redirectUri is http: warns once, naming the fix', async () => {
    const { r, lines } = routes()
    await r.handle(login())
    expect(lines).toEqual([])
    await r.handle(login({ secure: true }))
    await r.handle(login({ secure: true }))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /reached the app over HTTPS, but redirectUri is http:\/\/127\.0\.0\.1:3000/,
    )
    expect(lines[0]).toMatch(/without Secure and without their __Host- names/)
    expect(lines[0]).toMatch(/Set redirectUri to its https:\/\/ address/)
  })

  it('a proxy that says HTTPS the framework does not trust: warned once, naming trust proxy', async () => {
    const { r, lines } = routes()
    await r.handle(
      login({ secure: false, headers: { host: '127.0.0.1:3000', 'x-forwarded-proto': 'https' } }),
    )
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/X-Forwarded-Proto/)
    expect(lines[0]).toMatch(/trust proxy/)
  })

  it('no warning when secureCookies is set explicitly, or redirectUri is https:', async () => {
    for (const overrides of [
      { secureCookies: false },
      { redirectUri: 'https://app.example.test/auth/scheduling/callback' },
    ]) {
      const { r, lines } = routes(overrides)
      await r.handle(login({ secure: true, headers: { host: 'app.example.test' } }))
      expect(lines).toEqual([])
    }
  })
})

describe("a queue worker's handler (verify: false)", () => {
  it('needs no secret, dispatches to its handlers, and refuses any request it is given', async () => {
    const { createWebhookHandler } = await import('../../src/webhooks/handler.js')
    const seen: string[] = []
    const handler = createWebhookHandler({
      verify: false,
      on: { 'event.created': (event) => void seen.push(event.id) },
    })
    await handler.dispatch(
      {
        type: 'event.created',
        id: 'payload_w',
        version: '2020-11-18',
        occurred_at: `${TODAY}T14:03:22Z`,
        payload: {},
      } as never,
      { webhookId: 'wh_1', secretIndex: 0 },
    )
    expect(seen).toEqual(['payload_w'])
    const body = new TextEncoder().encode('{"type":"event.created","id":"payload_x"}')
    const answer = await handler.handle({
      method: 'POST',
      path: '/webhooks/scheduling',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': `sha256=${'0'.repeat(64)}`,
        'x-service-webhook-id': 'wh_1',
      },
      body,
    })
    expect(answer?.status).toBe(401)
    expect(seen).toEqual(['payload_w'])
  })

  it('without a secret and without verify: false the error names verify: false for workers', async () => {
    const { createWebhookHandler } = await import('../../src/webhooks/handler.js')
    expect(() => createWebhookHandler({ on: {} })).toThrow(/give it verify: false instead/)
    expect(() => createWebhookHandler({ verify: false, secret: 's3cret-value' })).toThrow(
      /leave the secret out/,
    )
  })
})
