import { connect, createServer } from 'node:net'
import { startSlowLink } from '@scheduling-kit/testing'
import { expect, it } from 'vitest'

/** An echo server on loopback; resolves to its port and its close. */
async function echo(): Promise<{ port: number; close: () => void }> {
  const server = createServer((socket) => socket.pipe(socket))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    close: () => server.close(),
  }
}

it('passes every byte on in order, each way at least delayMs later, with jitter too', async () => {
  const server = await echo()
  const link = await startSlowLink({ to: `127.0.0.1:${server.port}`, delayMs: 10, jitterMs: 15 })
  try {
    const socket = connect(link.port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.once('connect', resolve))
    const parts = Array.from({ length: 60 }, (_, n) => `${n},`)
    const sent = parts.join('')
    let got = ''
    const started = performance.now()
    let firstBack = 0
    const done = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        firstBack ||= performance.now()
        got += chunk
        if (got.length >= sent.length) resolve()
      }),
    )
    // Written a chunk a millisecond, so the jitter (15 ms) has chunks to reorder if it could.
    for (const part of parts) {
      socket.write(part)
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await done
    expect(got).toBe(sent)
    // There and back: twice the delay at least (a busy machine only adds to it).
    expect(firstBack - started).toBeGreaterThanOrEqual(19)
    socket.destroy()
  } finally {
    link.stop()
    server.close()
  }
})

it('through() points a URL at the link and keeps the rest of it', async () => {
  const link = await startSlowLink({ to: 'postgres://postgres@127.0.0.1:5432/test', delayMs: 0 })
  try {
    expect(link.through('postgres://postgres@127.0.0.1:5432/test?x=1')).toBe(
      `postgres://postgres@127.0.0.1:${link.port}/test?x=1`,
    )
  } finally {
    link.stop()
  }
})

it('refuses a target without a port, and a negative or non-finite delay', async () => {
  await expect(startSlowLink({ to: 'redis://localhost', delayMs: 1 })).rejects.toThrow(
    /names no host and port/,
  )
  // Never the target's text in the error, its fields included: a URL may hold a password.
  for (const to of ['postgres://u:hunter2@[bad/db', 'postgres://u:hunter2@db.example/test']) {
    const error: unknown = await startSlowLink({ to, delayMs: 1 }).catch((caught) => caught)
    expect(String(error)).toMatch(/names no host and port/)
    expect(`${String(error)} ${JSON.stringify({ ...(error as object) })}`).not.toContain('hunter2')
  }
  await expect(startSlowLink({ to: '127.0.0.1:1', delayMs: -1 })).rejects.toThrow(/0 or more/)
  await expect(
    startSlowLink({ to: '127.0.0.1:1', delayMs: 1, jitterMs: Number.NaN }),
  ).rejects.toThrow(/0 or more/)
})
