// apiUrl without its /v1: a configuration error naming the missing prefix, reported as such by
// ensure, by the callback's page and log (never "set up again automatically"), and by reconcile.
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { MemorySubscriptionStore } from '../../src/subscriptions/store.js'
import { createWebhookSubscriptions } from '../../src/subscriptions/subscriptions.js'
import { MemoryTokenStore } from '../../src/tokens/store.js'

let server: TokenServer
beforeEach(async () => {
  server = await startTokenServer()
})
afterEach(() => server.close())

const recorder = () => {
  const lines: Array<[string, string]> = []
  const at = (level: string) => (line: string) => void lines.push([level, line])
  return {
    lines,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  }
}

function setUp(apiUrl: string) {
  const { lines, logger } = recorder()
  const token = server.grant('acct_1').access_token
  const subscriptions = createWebhookSubscriptions({
    url: 'https://app.example.test/webhooks/scheduling',
    tokens: { getAccessToken: async () => token },
    apiUrl,
    store: new MemorySubscriptionStore(),
    retry: { baseDelayMs: 2, maxDelayMs: 2 },
    logger,
  })
  return { subscriptions, lines, logger }
}

describe('apiUrl without /v1', () => {
  it('ensure throws a ConfigError naming the missing /v1; reconcile reports it as configuration', async () => {
    const { subscriptions, lines } = setUp(server.url)
    const error = (await subscriptions.ensure('acct_1').catch((e: unknown) => e)) as Error & {
      code?: string
      cause?: { status?: number }
    }
    expect(error.code).toBe('invalid_options')
    expect(error.message).toContain('answered 404')
    expect(error.message).toContain(`${server.url}/v1`)
    expect(error.cause?.status).toBe(404)
    const report = await subscriptions.reconcile()
    expect(report.failed).toEqual(['acct_1'])
    const line = lines.find(([, l]) => l.includes('reconcile cannot repair'))
    expect(line?.[0]).toBe('error')
    expect(line?.[1]).toMatch(/configuration error/)
    expect(lines.some(([, l]) => /the next run tries again/.test(l))).toBe(false)
  })

  it('with /v1 the same set-up works', async () => {
    const { subscriptions } = setUp(`${server.url}/v1`)
    expect((await subscriptions.ensure('acct_1')).created).toBe(true)
  })

  it('the callback page does not promise an automatic repair, and the log says configuration', async () => {
    const { subscriptions, lines, logger } = setUp(server.url)
    const redirectUri = server.redirectUri
    const routes = createOAuthRoutes({
      clientId: server.clientId,
      clientSecret: server.clientSecret,
      authUrl: server.url,
      apiUrl: `${server.url}/v1`,
      redirectUri,
      tokenStore: new MemoryTokenStore(),
      cookieSecret: 'cookie-secret-0123456789abcdef0123456789',
      subscriptions,
      pkce: false,
      logger,
    })
    const login = await routes.handle({
      method: 'GET',
      path: '/login',
      headers: { host: new URL(redirectUri).host },
      mountPath: '/auth/scheduling',
      raw: undefined,
    })
    const state = new URL(login!.headers.location as string).searchParams.get('state')!
    const cookie = ([] as string[]).concat(login!.headers['set-cookie']!)[0]!.split(';')[0]!
    const code = server.issueCode('acct_1', redirectUri)
    const page = await routes.handle({
      method: 'GET',
      path: `/callback?code=${code}&state=${state}`,
      headers: { host: new URL(redirectUri).host, cookie },
      mountPath: '/auth/scheduling',
      raw: undefined,
    })
    expect(page?.status).toBe(200)
    expect(page?.body).not.toMatch(/set up again automatically/)
    expect(page?.body).toMatch(/operator has been told what to fix/)
    const logged = lines.find(([, l]) => l.includes('webhook cannot be set up'))
    expect(logged?.[1]).toMatch(/configuration error, which reconcile\(\) cannot repair/)
    expect(logged?.[1]).toMatch(/\/v1/)
  })
})
