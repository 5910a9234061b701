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
import { toNodeHandler } from 'h3/node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { VersionedJsonTokenStore } from '../src/versioned-store.js'

const file = () => join(tmpdir(), `scheduling-kit-h3-${randomBytes(6).toString('hex')}.json`)
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
    tokenFile: file(),
  })
  server.on('request', toNodeHandler(example.app))
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  await service.close()
})

describe('example: h3 app with scheduling-kit', () => {
  it('connects an account through the mounted OAuth sub-app', async () => {
    const { cookie } = await completeOAuthFlow(`${base}/auth/scheduling/login`, {
      account: 'acct_h3',
    })
    expect(
      await (await fetch(`${base}/api/account`, { headers: { cookie } })).json(),
    ).toMatchObject({ id: 'acct_h3' })
    expect((await example.store.get('acct_h3'))?.version).toBe(1)
  })

  it('verifies and lists the events the service sends', async () => {
    const { event } = await service.trigger('event.created')
    await service.trigger('poll.response.created') // not matched by its 'event.*' handler
    expect(await (await fetch(`${base}/api/events`)).json()).toEqual([
      { type: 'event.created', id: event.id },
    ])
  })
})

runTokenStoreConformance(() => new VersionedJsonTokenStore(file()), {
  describe,
  it,
  name: 'VersionedJsonTokenStore',
})
