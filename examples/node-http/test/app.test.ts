import type { AddressInfo } from 'node:net'
import { signPayload } from '@scheduling-kit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'

const secret = 'example-secret'
const app = createApp({ secret })
let base = ''
beforeAll(async () => {
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => app.server.close(() => resolve())))

describe('example node:http app', () => {
  it('receives a signed event and lists it on its own route', async () => {
    const body = JSON.stringify({
      type: 'event.requested',
      id: 'payload_ex1',
      payload: { state: 'awaiting_approval' },
    })
    const res = await fetch(`${base}/webhooks/scheduling`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': await signPayload(body, secret),
      },
      body,
    })
    expect(res.status).toBe(200)
    const listed = (await (await fetch(`${base}/api/events`)).json()) as Array<{ id: string }>
    expect(listed.map((e) => e.id)).toContain('payload_ex1')
    expect(await (await fetch(base)).text()).toContain('payload_ex1')
  })

  it('keeps its own 404 for unknown routes and refuses unsigned webhooks', async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404)
    const res = await fetch(`${base}/webhooks/scheduling`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(401)
  })
})
