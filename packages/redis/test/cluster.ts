import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@scheduling-kit/conformance'
import { Cluster, Redis } from 'ioredis'

/** A live Redis Cluster of three masters on free ports, started and stopped by a test. */
export interface LocalCluster {
  /** `host:port` of each master. */
  nodes: string[]
  client(): Cluster
  stop(): Promise<void>
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the local Redis Cluster: timed out on ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Starts three `redis-server --cluster-enabled yes` and joins them with `redis-cli --cluster create`. */
export async function startCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sk-cluster-'))
  const ports = [await freePort(), await freePort(), await freePort()]
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      process.env.REDIS_SERVER ?? 'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
      ],
      { cwd: dir, stdio: 'ignore' },
    ),
  )
  const clients: Cluster[] = []
  const cluster: LocalCluster = {
    nodes: ports.map((port) => `127.0.0.1:${port}`),
    client() {
      const client = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })))
      clients.push(client)
      return client
    },
    async stop() {
      await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())))
      for (const child of children) child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
  try {
    for (const port of ports) {
      await until(`port ${port}`, async () => {
        const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null })
        probe.on('error', () => {})
        try {
          await probe.connect()
          return (await probe.ping()) === 'PONG'
        } finally {
          probe.disconnect()
        }
      })
    }
    const created = spawnSync(
      process.env.REDIS_CLI ?? 'redis-cli',
      ['--cluster', 'create', ...cluster.nodes, '--cluster-replicas', '0', '--cluster-yes'],
      { encoding: 'utf8' },
    )
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stderr}`)
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () => {
        const probe = new Redis(port, '127.0.0.1')
        try {
          return String(await probe.cluster('INFO')).includes('cluster_state:ok')
        } finally {
          probe.disconnect()
        }
      })
    }
    return cluster
  } catch (error) {
    await cluster.stop()
    throw error
  }
}
