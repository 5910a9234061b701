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
        // Rejects on the pool's own time-out; a hang would be this test's time-out.
        await expect(call()).rejects.toThrow()
      }
    } finally {
      await pool.end()
    }
  }
})

it('a database that hangs after connecting (its process SIGSTOPped): with query_timeout every store call rejects', async () => {
  // A process of this test's own between the pool and PostgreSQL, stopped mid-session: the
  // connections stay open and nothing answers, as when the server itself is stopped.
  const { spawn } = await import('node:child_process')
  const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test')
  const proxy = spawn(
    process.execPath,
    [
      '-e',
      `const net = require('node:net')
       const server = net.createServer((client) => {
         const up = net.connect(${Number(target.port || 5432)}, ${JSON.stringify(target.hostname)})
         client.pipe(up).pipe(client)
         client.on('error', () => up.destroy()); up.on('error', () => client.destroy())
       })
       server.listen(0, '127.0.0.1', () => console.log(server.address().port))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  try {
    const port = await new Promise<number>((resolve) =>
      proxy.stdout.once('data', (d) => resolve(Number(String(d).trim()))),
    )
    const pool = new pg.Pool({
      connectionString: `postgres://${target.username}@127.0.0.1:${port}${target.pathname}`,
      connectionTimeoutMillis: 2_000,
      query_timeout: 300,
      max: 2,
    })
    pool.on('error', () => {})
    try {
      const tokens = new PostgresTokenStore({ pool, schema: 'public' })
      await pool.query('SELECT 1') // connected, through the proxy
      proxy.kill('SIGSTOP')
      for (const call of [() => tokens.get('k'), () => tokens.acquireLease('k', 'o', 1_000)]) {
        await expect(call()).rejects.toThrow(/timeout/i)
      }
    } finally {
      proxy.kill('SIGCONT')
      await pool.end().catch(() => {})
    }
  } finally {
    proxy.kill('SIGKILL')
  }
})
