// A PostgreSQL server of a test's own (Debian's server binaries, a fresh data directory, a port
// of its own): to crash, to start late, to cut connections of, without touching the shared one.
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './http.js'

export interface OwnPostgres {
  url: string
  port: number
  /** Starts it (made with `started: false`, or after `crash()`). */
  start(): void
  /** Stops it at once, as a crash would (`-m immediate`). */
  crash(): void
  /** Stops it at once, then starts it again `downMs` later. */
  crashAndRestart(downMs: number): Promise<void>
  /** Ends every connection but the one asking (`pg_terminate_backend`): how many it ended. */
  cutConnections(): Promise<number>
  /** Stops it and removes its data. */
  stop(): void
}

/** A server of the test's own, started unless `started: false` (then its port waits for it). */
export async function ownPostgres(options: { started?: boolean } = {}): Promise<OwnPostgres> {
  const root = '/usr/lib/postgresql'
  const version = existsSync(root)
    ? readdirSync(root).find((v) => existsSync(join(root, v, 'bin', 'initdb')))
    : undefined
  if (version === undefined) throw new Error('PostgreSQL server binaries are not installed')
  const bin = join(root, version, 'bin')
  const isRoot = process.getuid?.() === 0
  const as = (cmd: string, args: string[]): [string, string[]] =>
    isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
  const dir = mkdtempSync(join(tmpdir(), 'sk-own-pg-'))
  if (isRoot) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout)
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout)
    chownSync(dir, uid, gid)
  }
  chmodSync(dir, 0o700)
  const data = join(dir, 'data')
  const run = (cmd: string, args: string[]) => {
    const [c, a] = as(join(bin, cmd), args)
    const result = spawnSync(c, a, { stdio: ['ignore', 'ignore', 'ignore'] })
    if (result.status !== 0) throw new Error(`${cmd} ${args[0]} failed`)
  }
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync'])
  const port = await freePort()
  const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200`
  const start = () =>
    run('pg_ctl', ['start', '-w', '-D', data, '-l', join(dir, 'log'), '-o', settings])
  const crash = () => run('pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', data])
  if (options.started !== false) start()
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  return {
    url,
    port,
    start,
    crash,
    async crashAndRestart(downMs) {
      crash()
      await new Promise((r) => setTimeout(r, downMs))
      start()
    },
    async cutConnections() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        const { rows } = await client.query(
          'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = $1',
          ['client backend'],
        )
        return rows[0].n as number
      } finally {
        await client.end()
      }
    },
    stop() {
      try {
        run('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data])
      } catch {
        // Already stopped (crashed and not started again).
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}
