import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type FakeSchedulingService, startFakeSchedulingService } from '@scheduling-kit/testing'
import { createApp } from './app.js'

export interface StackOptions {
  appPort?: number
  servicePort?: number
  /** Approve at once instead of the consent page. */
  autoApprove?: boolean
  retrySchedule?: number[]
}

/** The fake service and the example app, wired to each other on loopback. */
export async function startStack(options: StackOptions = {}) {
  const service: FakeSchedulingService = await startFakeSchedulingService({
    port: options.servicePort ?? 0,
    autoApprove: options.autoApprove,
    retrySchedule: options.retrySchedule ?? [500, 2_000, 10_000],
  })
  const faults = { failNextDeliveries: 0 }
  const webhookSecret = randomBytes(24).toString('base64url')
  const config = {
    port: options.appPort ?? 0,
    publicUrl: '',
    webhookSecret,
    clientId: service.clientId,
    clientSecret: service.clientSecret,
    authUrl: service.authUrl,
    apiUrl: service.apiUrl,
    cookieSecret: randomBytes(32).toString('base64url'),
    tokenFile: join(
      tmpdir(),
      `scheduling-kit-example-${process.pid}-${randomBytes(4).toString('hex')}.json`,
    ),
  }
  // The redirect URI needs the port: take it first, then build the app with it.
  const { createServer } = await import('node:http')
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(config.port, '127.0.0.1', resolve))
  config.publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const example = createApp(config, faults)
  server.on('request', example.app)
  service.allowRedirectUri(`${config.publicUrl}/auth/scheduling/callback`)
  const webhook = service.registerWebhook({
    url: `${config.publicUrl}/webhooks/scheduling`,
    secret: webhookSecret,
  })
  return {
    service,
    example,
    faults,
    webhook,
    appUrl: config.publicUrl,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await service.close()
    },
  }
}

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';', 1)[0]!)
    .filter((c) => !c.endsWith('='))

/**
 * Connects an account the way a browser does: the app's login link, the service's consent page
 * (Allow), the callback. Resolves to the cookie header that marks this "browser" as connected.
 */
export async function connectAccount(appUrl: string, account = 'acct_1'): Promise<string> {
  const login = await fetch(`${appUrl}/auth/scheduling/login?returnTo=%2F`, { redirect: 'manual' })
  const state = cookiesOf(login).join('; ')
  let step = await fetch(login.headers.get('location')!, { redirect: 'manual' })
  if (step.status === 200) {
    // The consent page: post its form with "Allow".
    const html = await step.text()
    const form = new URLSearchParams()
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      form.set(m[1]!, m[2]!.replace(/&amp;/g, '&'))
    form.set('decision', 'allow')
    form.set('account', account)
    step = await fetch(new URL('/oauth/authorize', step.url), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    })
  }
  const callback = await fetch(step.headers.get('location')!, {
    redirect: 'manual',
    headers: { cookie: state },
  })
  if (callback.status !== 302)
    throw new Error(`callback answered ${callback.status}: ${await callback.text()}`)
  return cookiesOf(callback).join('; ')
}
