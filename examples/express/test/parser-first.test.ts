// The design card's line in an Express app as users already have it: express.json() and
// express.urlencoded() at the top, then `app.use(schedulingWebhooks(process.env.SCHEDULING_SECRET))`
// with nothing else changed. The fake service delivers over loopback as the service does.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { schedulingWebhooks } from '@scheduling-kit/express'
import { type FakeSchedulingService, startFakeSchedulingService } from '@scheduling-kit/testing'
import express from 'express'
import { afterEach, describe, expect, it } from 'vitest'

let service: FakeSchedulingService | undefined
let server: Server | undefined
afterEach(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  await service?.close()
  server = service = undefined
  delete process.env.SCHEDULING_SECRET
})

/** Listens first (the service needs the app's address), then hands requests to `app`. */
async function serve(): Promise<{ url: string; use(app: express.Express): void }> {
  server = createServer()
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, use: (app) => void server!.on('request', app) }
}

describe('an Express app whose JSON parser runs first', () => {
  it('verifies and runs every delivery on its first attempt, with the parser unchanged', async () => {
    service = await startFakeSchedulingService({ retrySchedule: [50, 100] })
    const host = await serve()
    process.env.SCHEDULING_SECRET = service.connectApp(host.url).webhookSecret

    const seen: string[] = []
    const app = express()
    app.use(express.json())
    app.use(express.urlencoded({ extended: true }))
    // The line as the design card has it, under strict TypeScript (this file is type-checked).
    app.use(
      schedulingWebhooks(process.env.SCHEDULING_SECRET).on('event.*', (event) => {
        seen.push(event.id)
      }),
    )
    app.post('/api/notes', (req, res) => void res.json({ got: req.body }))
    host.use(app)

    const sent: string[] = []
    for (const type of ['event.created', 'event.rescheduled', 'event.canceled']) {
      const { event, deliveries } = await service.trigger(type, {
        payload: { description: 'Café ☕ <b> "quoted" \\ /slash', attendees: [{ email: 'a@b.c' }] },
      })
      sent.push(event.id)
      expect(deliveries.map((d) => d.status)).toEqual([200])
    }
    await service.idle()
    expect(service.deliveries().map((d) => d.status)).toEqual([200, 200, 200])
    expect(seen).toEqual(sent)
    // The app's own routes keep their parsers.
    const form = await fetch(`${host.url}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1&b=two',
    })
    expect(await form.json()).toEqual({ got: { a: '1', b: 'two' } })
  })

  it('says the secret is missing at construction when the variable is unset', () => {
    delete process.env.SCHEDULING_SECRET
    expect(() => schedulingWebhooks(process.env.SCHEDULING_SECRET)).toThrow(
      /no signing secret was given \(it is undefined: is the environment variable set/,
    )
  })
})
