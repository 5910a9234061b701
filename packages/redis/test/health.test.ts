import { createServer, type Socket } from 'node:net'
import { checkHealth, createWebhookHandler } from '@scheduling-kit/core'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { RedisDedupeStore, RedisSubscriptionStore, RedisTokenStore } from '../src/index.js'
import { redis, uniquePrefix } from './helpers.js'

// A Redis that answers +OK to the client's hello, then, once frozen, nothing at all.
const sockets: Socket[] = []
let frozen = false
const silent = createServer((socket) => {
  sockets.push(socket)
  socket.on('data', (chunk) => {
    if (frozen) return
    const commands = chunk.toString('latin1').match(/^\*\d+\r$/gm)?.length ?? 0
    socket.write('+OK\r\n'.repeat(commands))
  })
})
afterAll(() => {
  for (const s of sockets) s.destroy()
  silent.close()
})

describe('health()', () => {
  it('every Redis store: ok when Redis answers PING; the handler and checkHealth say which store', async () => {
    const client = redis()
    const prefix = uniquePrefix('health')
    const dedupe = new RedisDedupeStore({ client, prefix, logger: false })
    const tokens = new RedisTokenStore({ client, prefix, logger: false })
    const subscriptions = new RedisSubscriptionStore({ client, prefix, logger: false })
    await client.ping()
    for (const store of [dedupe, tokens, subscriptions]) {
      expect(await store.health()).toEqual({
        ok: true,
        checks: [{ name: 'redis', ok: true, ms: expect.any(Number) }],
      })
    }
    const handler = createWebhookHandler('whsec_redis_health', { dedupe })
    const report = await checkHealth({ webhooks: handler, tokens })
    expect(report.ok).toBe(true)
    expect(report.checks.map((c) => c.name)).toEqual(['webhooks.dedupe.redis', 'tokens.redis'])
  })

  it('a client that is not connected says so at once, with its state', async () => {
    // A port nothing listens on: the client keeps reconnecting.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as { port: number }
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const client = new Redis({ port, host: '127.0.0.1', retryStrategy: () => 50 })
    client.on('error', () => {})
    try {
      const report = await new RedisTokenStore({ client, logger: false }).health()
      expect(report.ok).toBe(false)
      expect(report.checks[0]!.detail).toMatch(
        /^not connected \((connecting|reconnecting|connect)\)$/,
      )
    } finally {
      client.disconnect()
    }
  })

  it('a Redis that accepts and never answers: the check fails at the time-out, saying so', async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as { port: number }
    const client = new Redis({ port, host: '127.0.0.1', enableReadyCheck: false })
    client.on('error', () => {})
    try {
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
      frozen = true
      const store = new RedisDedupeStore({ client, logger: false })
      expect(await store.health({ timeoutMs: 100 })).toEqual({
        ok: false,
        checks: [
          { name: 'redis', ok: false, ms: expect.any(Number), detail: 'no answer within 100 ms' },
        ],
      })
    } finally {
      client.disconnect()
    }
  })
})
