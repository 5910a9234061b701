import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './http.js'

/** A pgbouncer in transaction mode in front of a PostgreSQL, started by a test (the Postgres store's and the PostgreSQL queue's). */
export interface LocalBouncer {
  /** The database URL through pgbouncer. */
  url: string
  stop(): Promise<void>
}

/** The uid and gid of `postgres`: pgbouncer refuses to run as root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim())
  return { uid: id('-u'), gid: id('-g') }
}

export async function startPgbouncer(databaseUrl: string): Promise<LocalBouncer> {
  const target = new URL(databaseUrl)
  const database = target.pathname.slice(1) || 'postgres'
  const user = decodeURIComponent(target.username || 'postgres')
  const dir = mkdtempSync(join(tmpdir(), 'sk-pgbouncer-'))
  chmodSync(dir, 0o777)
  const port = await freePort()
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`)
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = host=${target.hostname} port=${target.port || 5432} dbname=${database}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 8',
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  )
  chmodSync(join(dir, 'users.txt'), 0o644)
  chmodSync(join(dir, 'pgbouncer.ini'), 0o644)
  const child: ChildProcess = spawn(
    process.env.PGBOUNCER ?? 'pgbouncer',
    [join(dir, 'pgbouncer.ini')],
    {
      stdio: 'ignore',
      ...runAs(),
    },
  )
  const url = `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`
  const stop = async () => {
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    const client = new pg.Client({ connectionString: url })
    client.on('error', () => {})
    try {
      await client.connect()
      await client.query('SELECT 1')
      await client.end()
      return { url, stop }
    } catch (error) {
      await client.end().catch(() => {})
      if (Date.now() > deadline || child.exitCode !== null) {
        await stop()
        throw new Error(`pgbouncer did not start: ${(error as Error).message}`)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}
