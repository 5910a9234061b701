// createScheduling(() => options): nothing is read or built where the module loads (`next build`
// imports every route without the runtime's environment); the first request builds it once,
// tells a missing option with the eager call's message, and keeps the handlers registered at
// import.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { deferredObject, deferredPart } from '../../src/deferred.js'
import { isSchedulingError } from '../../src/errors/errors.js'
import { createOAuthRoutes } from '../../src/oauth/routes.js'
import { createScheduling, type SchedulingOptions } from '../../src/setup/scheduling.js'
import { createWebhookHandler } from '../../src/webhooks/handler.js'
import { deliver, envelope, serveHandler } from '../helpers.js'

/** An environment a test fills in after "import", as a platform does at run time. */
function environment() {
  const env: Record<string, string | undefined> = {}
  let reads = 0
  const read = (): SchedulingOptions => {
    reads++
    return {
      clientId: env.CLIENT_ID as string,
      clientSecret: env.CLIENT_SECRET as string,
      redirectUri: 'http://127.0.0.1/auth/scheduling/callback',
      authUrl: env.AUTH_URL as string,
      apiUrl: env.API_URL as string,
      secret: env.SECRET as string,
      cookieSecret: 'c'.repeat(32),
    }
  }
  const fill = () => {
    Object.assign(env, {
      CLIENT_ID: 'client',
      CLIENT_SECRET: 'client-secret',
      AUTH_URL: 'http://127.0.0.1:9/auth',
      API_URL: 'http://127.0.0.1:9/v1',
      SECRET: 'deferred-secret',
    })
  }
  return { read, fill, reads: () => reads }
}

const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** Serves a Fetch handler on loopback, as a route handler of a Fetch framework is served. */
async function serveFetch(fetchHandler: (request: Request) => Promise<Response>) {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const url = `http://127.0.0.1${req.url}`
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string') headers.set(name, value)
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks)
    try {
      const answer = await fetchHandler(new Request(url, { method: req.method, headers, body }))
      const out: Record<string, string> = {}
      answer.headers.forEach((value, name) => {
        out[name] = value
      })
      res.writeHead(answer.status, out).end(await answer.text())
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String((error as Error).message))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('createScheduling(() => options)', () => {
  it('reads nothing at import; handlers and routes made of it wait too', () => {
    const env = environment()
    const scheduling = createScheduling(env.read)
    const webhooks = createWebhookHandler(scheduling).on('event.created', () => {})
    scheduling.webhooks.on('event.canceled', () => {})
    const routes = createOAuthRoutes<Request>(scheduling)
    expect(env.reads()).toBe(0)
    // Awaiting it, or a symbol read (inspection), does not build it either.
    expect((scheduling as unknown as { then?: unknown }).then).toBeUndefined()
    expect((scheduling as unknown as Record<symbol, unknown>)[Symbol.iterator]).toBeUndefined()
    expect(env.reads()).toBe(0)
    expect(webhooks).toBeDefined()
    expect(routes).toBeDefined()
  })

  it("a missing option is told at the first request, with the eager call's message, and the next request tries again", async () => {
    const env = environment()
    const scheduling = createScheduling(env.read)
    let ran = 0
    const webhooks = createWebhookHandler(scheduling).on('event.created', () => {
      ran++
    })
    const eager = (() => {
      try {
        createScheduling(env.read())
      } catch (error) {
        return error as Error
      }
      return undefined
    })()
    expect(eager?.message).toMatch(/^createScheduling: pass webhookUrl/)
    const url = await serveHandler(webhooks).then((served) => {
      closers.push(served.close)
      return served.url
    })
    const body = JSON.stringify(envelope())
    await expect(webhooks.fetch(new Request(`${url}/webhooks/scheduling`))).rejects.toSatisfy(
      (error: unknown) => isSchedulingError(error) && error.message === eager?.message,
    )
    env.fill()
    const answer = await deliver(url, body, { secret: 'deferred-secret' })
    expect(answer.status).toBe(200)
    expect(ran).toBe(1)
    // Built once from here on: every later member reads the same parts.
    const reads = env.reads()
    expect(scheduling.tokens).toBe(scheduling.tokens)
    expect(scheduling.apiUrl).toBe('http://127.0.0.1:9/v1')
    expect(env.reads()).toBe(reads)
  })

  it('concurrent first requests build once, and every handler registered before the build runs', async () => {
    const env = environment()
    env.fill()
    const scheduling = createScheduling(env.read)
    const seen: string[] = []
    scheduling.webhooks.on('event.created', (event) => {
      seen.push(`created ${event.id}`)
    })
    scheduling.webhooks.onAny((event) => {
      seen.push(`any ${event.id}`)
    })
    const url = await serveFetch((request) => scheduling.webhooks.fetch(request))
    const bodies = Array.from({ length: 5 }, () => JSON.stringify(envelope()))
    const answers = await Promise.all(
      bodies.map((body) => deliver(url, body, { secret: 'deferred-secret' })),
    )
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200])
    expect(env.reads()).toBe(1)
    expect(seen.filter((s) => s.startsWith('created')).length).toBe(5)
    expect(seen.filter((s) => s.startsWith('any')).length).toBe(5)
    // A handler registered after the build reaches the built handler.
    let late = 0
    scheduling.webhooks.on('event.created', () => {
      late++
    })
    await deliver(url, JSON.stringify(envelope()), { secret: 'deferred-secret' })
    expect(late).toBe(1)
  })

  it('the OAuth routes made at import answer once the options are there', async () => {
    const env = environment()
    const scheduling = createScheduling(env.read)
    const routes = createOAuthRoutes<Request>(scheduling)
    env.fill()
    const url = await serveFetch((request) => routes.fetch(request))
    const login = await fetch(`${url}/auth/scheduling/login`, { redirect: 'manual' })
    expect(login.status).toBe(302)
    expect(login.headers.get('location')).toMatch(
      /^http:\/\/127\.0\.0\.1:9\/auth\/oauth\/authorize\?/,
    )
    expect(await routes.connectedKey(new Headers())).toBeUndefined()
    expect(env.reads()).toBe(1)
  })

  it('a spread reads as the built object; writes are refused', () => {
    const env = environment()
    env.fill()
    const scheduling = createScheduling(env.read)
    const spread = { ...scheduling }
    expect(spread.apiUrl).toBe('http://127.0.0.1:9/v1')
    expect(Object.keys(scheduling)).toContain('tokens')
    expect('runDue' in scheduling).toBe(true)
    expect(() => {
      ;(scheduling as { apiUrl: string }).apiUrl = 'x'
    }).toThrow(TypeError)
    expect(env.reads()).toBe(1)
  })

  it('deferredPart knows only the kinds of part a deferred object named', () => {
    interface Part {
      value(): number
    }
    let builds = 0
    const made = deferredObject(
      () => {
        builds++
        return { a: 1 }
      },
      (built) => ({
        // A part that waits: made of the built object at its first use.
        wait: {
          thing: (make: (b: { a: number }) => Part) => ({ value: () => make(built()).value() }),
        } as never,
      }),
    )
    const wait = deferredPart<{ a: number }, Part>(made, 'thing')
    const part = wait!((built) => ({ value: () => built.a + 1 }))
    expect(builds).toBe(0)
    expect(part.value()).toBe(2)
    expect(builds).toBe(1)
    expect(deferredPart(made, 'other')).toBeUndefined()
    expect(deferredPart({ a: 1 }, 'thing')).toBeUndefined()
    expect(deferredPart(() => ({ a: 1 }), 'thing')).toBeUndefined()
    expect(deferredPart(undefined, 'thing')).toBeUndefined()
  })
})
