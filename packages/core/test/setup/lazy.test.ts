// lazyScheduling(async () => options): nothing read, built or loaded at import; the first
// delivery, request or call reads the options (which may import the app's stores) and loads the
// toolkit once, however many come at once and in whatever order their promises settle; a
// failed read is told with createScheduling's message and tried again; members that are not
// promises say to await ready() until then.
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { isSchedulingError } from '../../src/errors/errors.js'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { lazyScheduling } from '../../src/setup/lazy.js'
import type { SchedulingOptions } from '../../src/setup/scheduling.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { deliver, envelope, serveHandler } from '../helpers.js'

const SECRET = 'lazy-secret'

/** Options read from an environment the test fills in, as a platform does at run time. */
function environment() {
  const env: Record<string, string | undefined> = {}
  let reads = 0
  const options = (): SchedulingOptions => ({
    clientId: 'client',
    clientSecret: 'client-secret',
    redirectUri: 'http://127.0.0.1/auth/scheduling/callback',
    authUrl: 'http://127.0.0.1:9/auth',
    apiUrl: env.API_URL as string,
    secret: SECRET,
    cookieSecret: 'c'.repeat(32),
  })
  const fill = () => {
    env.API_URL = 'http://127.0.0.1:9/v1'
  }
  return { options, fill, reads: () => reads, count: () => reads++ }
}

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

async function served(handler: Parameters<typeof serveHandler>[0]) {
  const server = await serveHandler(handler)
  closers.push(server.close)
  return server.url
}

describe('lazyScheduling(async () => options)', () => {
  it('reads nothing at import; a member that is not a promise says to await ready(); after it, every member reads the built parts', async () => {
    const env = environment()
    env.fill()
    const scheduling = lazyScheduling(async () => {
      env.count()
      return env.options()
    })
    const webhooks = createWebhookHandler(scheduling).on('event.created', () => {})
    createOAuthRoutes<Request>(scheduling)
    expect(env.reads()).toBe(0)
    expect((scheduling as unknown as { then?: unknown }).then).toBeUndefined()
    let told: unknown
    try {
      void scheduling.tokens
    } catch (error) {
      told = error
    }
    expect(isSchedulingError(told) && told.code).toBe('invalid_options')
    expect((told as Error).message).toMatch(/^lazyScheduling: .*await scheduling\.ready\(\) first/)
    // A handler's sync members too (its build, started by that read, settles after ready()).
    const probe = createWebhookHandler(scheduling)
    expect(() => probe.path).toThrow(/await scheduling\.ready\(\) first/)
    const built = await scheduling.ready()
    expect(env.reads()).toBe(1)
    expect(scheduling.tokens).toBe(built.tokens)
    expect(scheduling.apiUrl).toBe('http://127.0.0.1:9/v1')
    expect(webhooks.path).toBe('/webhooks/scheduling')
    expect(await scheduling.ready()).toBe(built)
    expect(env.reads()).toBe(1)
  })

  it("a missing option is told at the first delivery, with createScheduling's message; the next delivery reads again and runs", async () => {
    const env = environment()
    const scheduling = lazyScheduling(async () => {
      env.count()
      return env.options()
    })
    let ran = 0
    const webhooks = createWebhookHandler(scheduling).on('event.created', () => {
      ran++
    })
    const url = await served(webhooks)
    await expect(
      webhooks.handle({ method: 'POST', path: '/webhooks/scheduling', headers: {}, body: '' }),
    ).rejects.toThrow(/^createScheduling: apiUrl is the API address/)
    await expect(scheduling.runDue()).rejects.toThrow(/^createScheduling: apiUrl/)
    env.fill()
    const answer = await deliver(url, JSON.stringify(envelope()), { secret: SECRET })
    expect(answer.status).toBe(200)
    expect(ran).toBe(1)
    expect(env.reads()).toBe(3)
    // runDue and health wait for the build themselves.
    expect((await scheduling.runDue()).tasks).toEqual({})
    expect((await scheduling.health()).ok).toBe(true)
  })

  it('an options function that throws at once is a failed build too, tried again', async () => {
    let fail = true
    const env = environment()
    env.fill()
    const scheduling = lazyScheduling(() => {
      if (fail) throw new Error('DATABASE_URL is not set.')
      return env.options()
    })
    await expect(scheduling.ready()).rejects.toThrow('DATABASE_URL is not set.')
    fail = false
    await expect(scheduling.ready()).resolves.toBeDefined()
    expect(() => lazyScheduling({} as never)).toThrow(/^lazyScheduling: pass a function/)
  })

  it('first uses racing the options read, in any order (fc.scheduler): one read, one build, every handler registered before or during it runs once a delivery', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 4 }), async (s, users) => {
        const env = environment()
        env.fill()
        const scheduling = lazyScheduling(() => {
          env.count()
          return s.schedule(Promise.resolve(env.options()), 'options read')
        })
        const seen: string[] = []
        const webhooks = createWebhookHandler(scheduling).on('event.created', () => {
          seen.push('early')
        })
        const body = JSON.stringify(envelope())
        const uses: Promise<unknown>[] = []
        for (let i = 0; i < users; i++) {
          uses.push(s.schedule(Promise.resolve(), `ready ${i}`).then(() => scheduling.ready()))
          uses.push(
            s
              .schedule(Promise.resolve(), `register ${i}`)
              .then(() => webhooks.on('event.created', () => seen.push(`late ${i}`))),
          )
        }
        await s.waitAll()
        await Promise.all(uses)
        expect(env.reads()).toBe(1)
        const url = await served(webhooks)
        const answer = await deliver(url, body, { secret: SECRET })
        expect(answer.status).toBe(200)
        expect(seen.sort()).toEqual(
          ['early', ...Array.from({ length: users }, (_, i) => `late ${i}`)].sort(),
        )
        for (const close of closers.splice(0)) await close()
      }),
      { numRuns: 60 },
    )
  })

  it('the OAuth routes made at import answer once the options are there', async () => {
    const env = environment()
    const scheduling = lazyScheduling(async () => env.options())
    const routes = createOAuthRoutes<Request>(scheduling)
    env.fill()
    const login = await routes.fetch(new Request('http://127.0.0.1/auth/scheduling/login'))
    expect(login.status).toBe(302)
    expect(login.headers.get('location')).toMatch(
      /^http:\/\/127\.0\.0\.1:9\/auth\/oauth\/authorize\?/,
    )
    expect(await routes.connectedKey(new Headers())).toBeUndefined()
  })
})
