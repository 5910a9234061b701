import { randomBytes } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  completeOAuthFlow,
  runTokenStoreConformance,
  startFakeSchedulingService,
} from '@scheduling-kit/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../src/app.js'
import { EncryptedFileTokenStore } from '../src/encrypted-store.js'

const dir = () => join(tmpdir(), `scheduling-kit-fastify-${randomBytes(6).toString('hex')}`)
const tokenDir = dir()
let service: Awaited<ReturnType<typeof startFakeSchedulingService>>
let example: Awaited<ReturnType<typeof createApp>>
let base = ''

beforeAll(async () => {
  service = await startFakeSchedulingService()
  // Fastify wants its plugins before listening: take a port first for the redirect URI.
  const probe = (await import('node:net')).createServer()
  const port = await new Promise<number>((r) =>
    probe.listen(0, '127.0.0.1', () => r((probe.address() as { port: number }).port)),
  )
  await new Promise((r) => probe.close(r))
  base = `http://127.0.0.1:${port}`
  example = await createApp({
    ...service.connectApp(base),
    cookieSecret: randomBytes(32).toString('hex'),
    tokenDir,
    encryptionKey: randomBytes(32),
  })
  await example.app.listen({ port, host: '127.0.0.1' })
})
afterAll(async () => {
  await example.app.close()
  await service.close()
})

describe('example: Fastify app with scheduling-kit', () => {
  it('connects an account; its tokens are stored encrypted', async () => {
    expect(await (await fetch(base)).text()).toContain('id="connect"')
    const { cookie } = await completeOAuthFlow(`${base}/auth/scheduling/login`, {
      account: 'acct_fastify',
    })
    expect(await (await fetch(base, { headers: { cookie } })).text()).toContain(
      'Connected as User acct_fastify',
    )
    const record = await example.store.get('acct_fastify')
    expect(record?.accessToken).toMatch(/^at_/)
    for (const file of await readdir(tokenDir)) {
      expect((await readFile(join(tokenDir, file))).includes(record!.accessToken)).toBe(false)
    }
  })

  it("verifies webhooks while its own JSON routes keep Fastify's parser", async () => {
    const { event } = await service.trigger('event.checkout.completed')
    expect(await (await fetch(base)).text()).toContain(event.id)
    expect(await (await fetch(`${base}/api/events`)).json()).toEqual([
      { type: 'event.checkout.completed', id: event.id },
    ])
    const note = await fetch(`${base}/api/notes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    })
    expect(await note.json()).toEqual({ note: { a: 1 } })
  })
})

runTokenStoreConformance(() => new EncryptedFileTokenStore(dir(), randomBytes(32)), {
  describe,
  it,
  name: 'EncryptedFileTokenStore',
})
