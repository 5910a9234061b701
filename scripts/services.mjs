// Redis and PostgreSQL for the tests. When the usual ones answer (127.0.0.1:6379, and :5432 with
// trust auth for user postgres, database test) the tests use them. When one does not, a server
// of our own is started on a free port (Debian's redis-server / postgresql packages, installed
// as root when missing) and stopped afterwards; REDIS_URL / DATABASE_URL tell the tests where.
// SCHEDULING_KIT_OWN_SERVICES=1 starts our own even when the usual ones answer.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const isRoot = process.getuid?.() === 0

/** Sends `payload` to host:port and resolves to what came back first ('' on no answer). */
function ask(port, payload, timeoutMs = 1_000) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    const done = (answer) => {
      socket.destroy()
      resolve(answer)
    }
    socket.setTimeout(timeoutMs, () => done(''))
    socket.once('error', () => done(''))
    socket.once('connect', () => socket.write(payload))
    socket.once('data', (data) => done(data.toString('latin1')))
  })
}

const redisAnswers = async (port) => (await ask(port, 'PING\r\n')).startsWith('+PONG')
// An SSLRequest: a PostgreSQL server answers with one byte, 'S' or 'N'.
const postgresAnswers = async (port) =>
  /^[SN]$/.test(await ask(port, Buffer.from([0, 0, 0, 8, 4, 210, 22, 47])))

async function freePort() {
  const server = createServer()
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  await new Promise((r) => server.close(r))
  return port
}

async function waitFor(what, check, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not start within ${timeoutMs / 1000} s`)
    await sleep(100)
  }
}

function aptInstall(pkg) {
  if (!isRoot || spawnSync('sh', ['-c', 'command -v apt-get']).status !== 0) {
    throw new Error(
      `${pkg} is not installed and cannot be installed here (needs root and apt-get): install Debian's ${pkg} package.`,
    )
  }
  console.log(`Installing ${pkg} (Debian package) for the tests...`)
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' })
  const result = spawnSync('apt-get', ['install', '-y', '-qq', pkg], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  })
  if (result.status !== 0) throw new Error(`apt-get install ${pkg} failed`)
}

/** True when `command` is there, installing its Debian package first where that can be done. */
function installable(command, pkg) {
  if (which(command) || existsSync(`/usr/sbin/${command}`)) return true
  if (!isRoot || !which('apt-get')) {
    console.warn(
      `\n!!! ${command} is not installed (and this is no Debian machine run as root): the tests ` +
        `that start a ${command} of their own are left out. Install ${pkg} to run them.\n`,
    )
    return false
  }
  aptInstall(pkg)
  return true
}

function which(command) {
  const result = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' })
  return result.status === 0 ? result.stdout.trim() : undefined
}

function postgresBin() {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a))
  for (const v of versions)
    if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  return undefined
}

async function startRedis() {
  if (!which('redis-server')) aptInstall('redis-server')
  const port = await freePort()
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  )
  await waitFor('redis-server', () => redisAnswers(port))
  console.log(`Started redis-server on 127.0.0.1:${port} for the tests.`)
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') }
}

async function startPostgres() {
  if (!postgresBin()) aptInstall('postgresql')
  const bin = postgresBin()
  const dir = mkdtempSync(join(tmpdir(), 'scheduling-kit-pg-'))
  // PostgreSQL refuses to run as root: as root, its data directory and process are the
  // postgres user's.
  // Called by its path: a PATH without /usr/sbin (a login shell's, some CI runners') lacks it.
  const runuser =
    ['/usr/sbin/runuser', '/sbin/runuser', '/usr/bin/runuser'].find((path) => existsSync(path)) ??
    'runuser'
  const asUser = (cmd, args) =>
    isRoot ? [runuser, ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args]
  if (isRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
    chownSync(dir, Number(ids.stdout), Number(gids.stdout))
  }
  chmodSync(dir, 0o700)
  const data = join(dir, 'data')
  const [initCmd, initArgs] = asUser(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
  ])
  const init = spawnSync(initCmd, initArgs, { stdio: ['ignore', 'ignore', 'inherit'] })
  if (init.status !== 0) throw new Error('initdb failed')
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300`
  const pgCtl = (args) => {
    const [cmd, full] = asUser(join(bin, 'pg_ctl'), args)
    return spawnSync(cmd, full, { stdio: ['ignore', 'ignore', 'inherit'] })
  }
  const log = join(dir, 'postgres.log')
  if (pgCtl(['start', '-w', '-D', data, '-l', log, '-o', options]).status !== 0) {
    throw new Error(`postgres did not start (see ${log})`)
  }
  await waitFor('postgres', () => postgresAnswers(port))
  console.log(`Started postgres on 127.0.0.1:${port} for the tests.`)
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      pgCtl(['stop', '-w', '-m', 'fast', '-D', data])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Makes sure the tests have a Redis and a PostgreSQL. Resolves to the environment to pass to
 * them and a `stop()` for what was started here.
 */
export async function ensureServices({ redis = true, postgres = true } = {}) {
  const own = process.env.SCHEDULING_KIT_OWN_SERVICES === '1'
  // Some tests start servers of their own: the queue's outage test and the Redis store's
  // restart test a redis-server, the Redis Cluster test three (and redis-cli), the PostgreSQL
  // store's a pgbouncer in transaction mode. Their commands are installed here when missing and
  // this is a Debian machine run as root; elsewhere those test files are left out, loudly
  // (vitest.shared.ts), and every other test still runs.
  if (redis) installable('redis-server', 'redis-server')
  const env = {}
  if (postgres && installable('pgbouncer', 'pgbouncer') && !which('pgbouncer')) {
    env.PGBOUNCER = '/usr/sbin/pgbouncer'
  }
  const started = []
  if (redis && process.env.REDIS_URL === undefined && (own || !(await redisAnswers(6379)))) {
    const server = await startRedis()
    env.REDIS_URL = server.url
    started.push(server)
  }
  if (
    postgres &&
    process.env.DATABASE_URL === undefined &&
    (own || !(await postgresAnswers(5432)))
  ) {
    const server = await startPostgres()
    env.DATABASE_URL = server.url
    started.push(server)
  }
  return {
    env,
    async stop() {
      for (const service of started) await service.stop()
    },
  }
}
