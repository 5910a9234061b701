import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@scheduling-kit/conformance'
import { Redis } from 'ioredis'
import { afterAll } from 'vitest'

/** The Redis the tests use: REDIS_URL (scripts/test.mjs sets it when it starts its own), else the local one. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
export const connection = { url: REDIS_URL }

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})
/** Runs after the file's tests, last registered first. */
export const later = (fn: () => Promise<unknown> | unknown) => void cleanups.push(fn)

export function redis(url = REDIS_URL): Redis {
  const client = new Redis(url)
  later(() => client.quit().catch(() => client.disconnect()))
  return client
}

export { freePort }

export const uniqueQueue = (name: string) => `sk-test-${name}-${randomBytes(4).toString('hex')}`

/** A redis-server of the test's own on a free port, to stop and start again. */
export interface OwnRedis {
  url: string
  port: number
  start(): Promise<void>
  stop(): Promise<void>
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  // Its working directory, where anything it writes (an append-only file, a snapshot) goes.
  const dir = mkdtempSync(join(tmpdir(), 'sk-own-redis-'))
  later(() => rmSync(dir, { recursive: true, force: true }))
  let child: ChildProcess | undefined
  const own: OwnRedis = {
    url,
    port,
    async start() {
      child = spawn(
        process.env.REDIS_SERVER ?? 'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { cwd: dir, stdio: 'ignore' },
      )
      const deadline = Date.now() + 10_000
      for (;;) {
        const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null })
        probe.on('error', () => {})
        try {
          await probe.connect()
          await probe.ping()
          return
        } catch (error) {
          if (Date.now() > deadline) throw error
          await new Promise((r) => setTimeout(r, 50))
        } finally {
          probe.disconnect()
        }
      }
    },
    async stop() {
      const running = child
      child = undefined
      if (running === undefined || running.exitCode !== null) return
      const exited = new Promise((resolve) => running.once('exit', resolve))
      running.kill('SIGKILL')
      await exited
    },
  }
  later(() => own.stop())
  await own.start()
  return own
}
