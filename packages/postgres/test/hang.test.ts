import { createServer, type Socket } from 'node:net'
import pg from 'pg'
import { afterAll, expect, it } from 'vitest'
import { PostgresDedupeStore, PostgresTokenStore } from '../src/index.js'

// A database that accepts the connection and then never answers, and one that is not there:
// with the pool's connectionTimeoutMillis the stores' calls fail, they do not hang.
const sockets: Socket[] = []
const silent = createServer((socket) => void sockets.push(socket))
afterAll(() => {
  for (const s of sockets) s.destroy()
  silent.close()
})

it('a database that never answers, or is gone: every store call rejects within the pool time-out', async () => {
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const { port } = silent.address() as { port: number }
  for (const target of [port, 1]) {
    const pool = new pg.Pool({
      host: '127.0.0.1',
      port: target,
      user: 'postgres',
      connectionTimeoutMillis: 200,
    })
    pool.on('error', () => {})
    try {
      const dedupe = new PostgresDedupeStore({ pool })
      const tokens = new PostgresTokenStore({ pool })
      for (const call of [
        () => dedupe.claim('k', 'o'),
        () => dedupe.complete('k', 'o'),
        () => tokens.get('k'),
        () => tokens.acquireLease('k', 'o', 1_000),
      ]) {
        const started = performance.now()
        await expect(call()).rejects.toThrow()
        expect(performance.now() - started).toBeLessThan(2_000)
      }
    } finally {
      await pool.end()
    }
  }
})
