import { createServer, type Socket } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, expect, it } from 'vitest'
import { RedisDedupeStore, RedisTokenStore } from '../src/index.js'

// A Redis that accepts the connection and then never answers: the stores' calls must fail
// within the client's commandTimeout, not hang the delivery or the refresh.
const sockets: Socket[] = []
const silent = createServer((socket) => void sockets.push(socket))
afterAll(() => {
  for (const s of sockets) s.destroy()
  silent.close()
})

it('a Redis that stops answering: every store call rejects within commandTimeout', async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const { port } = silent.address() as { port: number }
  const client = new Redis({
    port,
    host: '127.0.0.1',
    commandTimeout: 200,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
  })
  client.on('error', () => {})
  try {
    const dedupe = new RedisDedupeStore({ client, logger: false })
    const tokens = new RedisTokenStore({ client, logger: false })
    const calls = [
      () => dedupe.claim('k', 'o'),
      () => dedupe.complete('k', 'o'),
      () => dedupe.release('k', 'o'),
      () => tokens.get('k'),
      () =>
        tokens.compareAndSet(
          'k',
          { accessToken: 'a', refreshToken: 'r', tokenType: 'bearer', expiresAt: 1 },
          1,
        ),
      () => tokens.acquireLease('k', 'o', 1_000),
      () => tokens.releaseLease('k', 'o'),
    ]
    for (const call of calls) {
      // Rejects on commandTimeout's own bound; a hang would be this test's time-out.
      await expect(call()).rejects.toThrow(/timed out/i)
    }
  } finally {
    client.disconnect()
  }
})
