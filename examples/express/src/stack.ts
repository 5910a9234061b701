import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  completeOAuthFlow,
  type FakeSchedulingService,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
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
    appName: 'Bookings (example app)',
  })
  const faults = { failNextDeliveries: 0 }
  const adminToken = randomBytes(16).toString('hex')
  // The redirect URI needs the port: take it first, then build the app with it.
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(options.appPort ?? 0, '127.0.0.1', resolve))
  const settings = service.connectApp(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  const example = createApp(
    {
      ...settings,
      port: 0,
      cookieSecret: randomBytes(32).toString('base64url'),
      adminToken,
      tokenFile: join(
        tmpdir(),
        `scheduling-kit-example-${process.pid}-${randomBytes(4).toString('hex')}.json`,
      ),
    },
    faults,
  )
  server.on('request', example.app)
  return {
    service,
    example,
    faults,
    webhookId: settings.webhookId,
    appUrl: settings.publicUrl,
    /** The cookie value that opens the delivery page (`example_admin=<adminToken>`). */
    adminToken,
    close: async () => {
      example.closeStreams()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await service.close()
    },
  }
}

/** Connects an account the way a browser does; resolves to the cookie header of that "browser". */
export async function connectAccount(appUrl: string, account = 'acct_1'): Promise<string> {
  const { cookie, callback } = await completeOAuthFlow(
    `${appUrl}/auth/scheduling/login?returnTo=%2F`,
    { account },
  )
  if (callback.status !== 302)
    throw new Error(`callback answered ${callback.status}: ${await callback.text()}`)
  return cookie
}
