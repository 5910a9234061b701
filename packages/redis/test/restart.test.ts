import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@scheduling-kit/conformance'
import { createOAuthClient, createTokenManager } from '@scheduling-kit/core'
import { startTokenServer } from '@scheduling-kit/fake-auth'
import { Redis } from 'ioredis'
import { afterAll, expect, it } from 'vitest'
import { RedisTokenStore } from '../src/index.js'

// A Redis of this test's own, with the append-only file the README asks for, restarted
// gracefully (SIGTERM, then started again on the same port and directory) while 100
// connections refresh against a strict token endpoint that answers 500 ms after it spent each
// refresh token: the answers arrive while Redis is down, and every write must still land.
const dir = mkdtempSync(join(tmpdir(), 'sk-restart-'))
let child: ChildProcess | undefined
afterAll(() => {
  child?.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

async function startRedis(port: number): Promise<void> {
  child = spawn(
    process.env.REDIS_SERVER ?? 'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--save',
      '',
    ],
    { cwd: dir, stdio: 'ignore' },
  )
  for (const deadline = Date.now() + 10_000; ; ) {
    const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null })
    probe.on('error', () => {})
    try {
      await probe.connect()
      if ((await probe.ping()) === 'PONG') return
    } catch (error) {
      if (Date.now() > deadline) throw error
    } finally {
      probe.disconnect()
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function stopRedis(): Promise<void> {
  const running = child!
  const exited = new Promise((resolve) => running.once('exit', resolve))
  running.kill('SIGTERM') // a graceful shutdown: the append-only file is flushed
  await exited
}

it('a graceful Redis restart during a storm of 100 refreshes (the answers arrive while it is down): 0 connections lost, 0 caller errors', async () => {
  const port = await freePort()
  await startRedis(port)
  const server = await startTokenServer()
  server.setLatency(500, 'success')
  const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 1 })
  client.on('error', () => {})
  try {
    const store = new RedisTokenStore({ client, logger: false })
    const keys = Array.from({ length: 100 }, (_, i) => `acct_${i}`)
    for (const key of keys) {
      const granted = server.grant(key)
      await store.set(key, {
        accessToken: granted.access_token,
        refreshToken: granted.refresh_token,
        tokenType: 'bearer',
        expiresAt: Date.now() - 1_000,
        obtainedAt: Date.now() - 7_201_000,
      })
    }
    const tokens = createTokenManager({
      oauth: createOAuthClient({
        authUrl: server.url,
        clientId: server.clientId,
        clientSecret: server.clientSecret,
        redirectUri: server.redirectUri,
      }),
      store,
      lease: { pollMs: 5 },
    })
    const results = Promise.allSettled(keys.map((key) => tokens.getAccessToken(key)))
    // Every request is at the token endpoint (spent), none answered yet: restart Redis.
    await new Promise<void>((resolve) => {
      const check = () =>
        server.counters.refresh >= keys.length ? resolve() : setTimeout(check, 5)
      check()
    })
    await stopRedis()
    await new Promise((r) => setTimeout(r, 700)) // down while the answers arrive
    await startRedis(port)
    const settled = await results
    const failed = settled.filter((r) => r.status === 'rejected')
    expect(failed.map((r) => String((r as PromiseRejectedResult).reason))).toEqual([])
    const lost = []
    for (const key of keys) {
      const record = await store.get(key)
      if (record === undefined || !server.isRefreshTokenValid(record.refreshToken)) lost.push(key)
    }
    expect(lost).toEqual([])
    expect(server.counters.refresh).toBe(keys.length)
    await tokens.close()
  } finally {
    client.disconnect()
    await server.close()
  }
}, 180_000)
