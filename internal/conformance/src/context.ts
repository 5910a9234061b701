import {
  type AnyWebhookEvent,
  MemoryTokenStore,
  type OAuthRoutesOptions,
  type WebhookHandlerOptions,
} from '@scheduling-kit/core'
import { startTokenServer, type TokenServer } from '@scheduling-kit/fake-auth'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { AdapterHarness, AppSetup, ParserPlacement } from './harness.js'
import { freePort } from './http.js'

// What every case of the conformance suite shares: the secrets, the app it starts, the token
// server. The suite's modules take it as `ctx`; none of them imports another.

export const SECRET = 'conformance-secret'
export const COOKIE_SECRET = 'conformance-cookie-secret-0123456789'

/** An app under test, started by the suite. */
export interface Started {
  base: string
  hook: string
  events: AnyWebhookEvent[]
  contexts: Array<string | undefined>
  errors: string[]
  store: MemoryTokenStore
  connected: string[]
  frameworkErrors: string[]
  /** Lines the framework's logger (or the console) printed. */
  logged: string[]
}

export interface StartOptions {
  webhooks?: Partial<WebhookHandlerOptions>
  configure?: AppSetup['configure']
  prefix?: string
  parser?: ParserPlacement
  oauth?: Partial<OAuthRoutesOptions>
}

/** What the attack cases need from the suite. */
export interface SuiteContext {
  start(options?: StartOptions): Promise<Started>
  auth(): TokenServer
  /** The placement the suite uses when a case does not name one. */
  defaultParser: ParserPlacement
}

/**
 * The suite's context for one adapter: a token server for the whole file, and `start()`, which
 * starts the adapter's app with the suite's settings (and stops it after the test).
 */
export function createSuiteContext(harness: AdapterHarness): SuiteContext {
  let auth: TokenServer
  let running: Array<{ close(): Promise<void> }> = []
  beforeAll(async () => {
    auth = await startTokenServer()
  })
  afterAll(() => auth.close())
  afterEach(async () => {
    await Promise.all(running.map((r) => r.close()))
    running = []
  })

  // Where the raw bytes survive; the `before` placement has its own test.
  const defaultParser =
    harness.parsers.find((p) => p !== 'before' || harness.parsedBefore === 'raw') ??
    harness.parsers[0]!

  // A port found free can be taken (by another process's outgoing connection, say) before the
  // app listens on it: a start that finds it taken tries another port.
  async function start(options: StartOptions = {}): Promise<Started> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOn(await freePort(), options)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 5) throw error
      }
    }
  }

  async function startOn(port: number, options: StartOptions): Promise<Started> {
    const base = `http://127.0.0.1:${port}`
    const events: AnyWebhookEvent[] = []
    const contexts: Array<string | undefined> = []
    const errors: string[] = []
    const connected: string[] = []
    const frameworkErrors: string[] = []
    const logged: string[] = []
    const store = new MemoryTokenStore()
    const redirectUri = `${base}/auth/scheduling/callback`
    auth.allowRedirectUri(redirectUri)
    const setup: AppSetup = {
      frameworkErrors,
      logged,
      prefix: options.prefix ?? '',
      parser: options.parser ?? defaultParser,
      configure: options.configure,
      webhooks: {
        secret: SECRET,
        onAny: (event, ctx) => {
          events.push(event)
          contexts.push(ctx.webhookId)
        },
        onError: (error) => void errors.push(error.code),
        ...options.webhooks,
      },
      oauth: {
        clientId: auth.clientId,
        clientSecret: auth.clientSecret,
        redirectUri,
        authUrl: auth.url,
        apiUrl: `${auth.url}/v1`,
        tokenStore: store,
        cookieSecret: COOKIE_SECRET,
        successRedirect: '/app/ping',
        onConnected: ({ key }) => void connected.push(key),
        ...options.oauth,
      },
    }
    running.push(await harness.start(port, setup))
    return {
      base,
      hook: `${base}${setup.prefix}/webhooks/scheduling`,
      events,
      contexts,
      errors,
      store,
      connected,
      frameworkErrors,
      logged,
    }
  }

  return { start, auth: () => auth, defaultParser }
}
