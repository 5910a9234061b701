import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  completeOAuthFlow,
  runTokenStoreConformance,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { DirectoryTokenStore } from '../src/directory-store.js'

const dir = () => join(tmpdir(), `scheduling-kit-koa-${randomBytes(6).toString('hex')}`)
let service: Awaited<ReturnType<typeof startFakeSchedulingService>>
let server: Server
let base = ''
let example: ReturnType<typeof createApp>

beforeAll(async () => {
  service = await startFakeSchedulingService()
  server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  example = createApp({
    ...service.connectApp(base),
    cookieSecret: randomBytes(32).toString('hex'),
    tokenDir: dir(),
  })
  server.on('request', example.app.callback())
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await service.close()
})

describe('example: Koa app with scheduling-kit', () => {
  it('connects an account through the consent page and keeps its tokens in the directory store', async () => {
    expect(await (await fetch(base)).text()).toContain('id="connect"')
    const { cookie } = await completeOAuthFlow(`${base}/auth/scheduling/login`, {
      account: 'acct_koa',
    })
    expect((await example.store.get('acct_koa'))?.refreshToken).toMatch(/^rt_/)
    expect(await (await fetch(base, { headers: { cookie } })).text()).toContain(
      'Connected as User acct_koa',
    )
  })

  it('verifies and lists the events the service sends, behind its own body parser', async () => {
    const { event, deliveries } = await service.trigger('event.attendee.added')
    expect(deliveries[0]?.status).toBe(200)
    expect(await (await fetch(`${base}/api/events`)).json()).toEqual([
      { type: 'event.attendee.added', id: event.id },
    ])
  })
})

runTokenStoreConformance(() => new DirectoryTokenStore(dir()), {
  describe,
  it,
  name: 'DirectoryTokenStore',
})
