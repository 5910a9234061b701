// h3 beyond the shared suite: a body read before the middleware is named as such.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deliver, envelope } from '@scheduling-kit/conformance'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { afterEach, expect, it, vi } from 'vitest'
import { schedulingWebhooks } from '../src/index.js'

let server: Server | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
})

it('a body another middleware read answers body_parsed with the fix, not a signature failure', async () => {
  vi.spyOn(console, 'warn').mockImplementation(() => {})
  const app = new H3()
  app.use(async (event, next) => {
    await event.req.text()
    return next()
  })
  app.use(schedulingWebhooks('h3-secret'))
  server = createServer(toNodeHandler(app))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/scheduling`
  const answer = await deliver(url, envelope(), { secret: 'h3-secret' })
  expect(answer.status).toBe(500)
  expect(answer.json.error?.code).toBe('body_parsed')
  expect(answer.json.error?.message).toMatch(/already read.*Mount schedulingWebhooks\(\) before/)
})
