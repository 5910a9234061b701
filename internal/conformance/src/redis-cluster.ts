// A Redis Cluster on this machine for tests and the bench: three masters (six nodes with
// replicas) on free ports, started and stopped by whoever asked for it.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Cluster, type ClusterOptions, Redis } from 'ioredis'
import { freePort } from './http.js'

/** A live Redis Cluster of three masters on free ports, started and stopped by a test. */
export interface LocalCluster {
  /** `host:port` of each node (with replicas: masters and replicas). */
  nodes: string[]
  /** A client of the cluster, closed by `stop()`; `options` as ioredis's `Cluster` takes them. */
  client(options?: ClusterOptions): Cluster
  /** Kills the node at `host:port` with SIGKILL (its replica takes over, when it has one). */
  kill(address: string): void
  /** Stops (`SIGSTOP`) or resumes (`SIGCONT`) the node at `host:port`. */
  pause(address: string, paused: boolean): void
  /** `host:port` of the replica of the master at `address`, as the cluster says now. */
  replicaOf(address: string): Promise<string>
  /** `host:port` of each master, as the cluster says now, in the order of their slots. */
  masters(): Promise<string[]>
  stop(): Promise<void>
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the local Redis Cluster: timed out on ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/**
 * A port for a cluster node: free, with its cluster bus port (10 000 above) free too, both below
 * Linux's ephemeral range (32768-60999), where another process's outgoing connection could take
 * the bus port before the node binds it.
 */
async function clusterPort(taken: readonly number[]): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = await freePort()
    if (port > 22_767 || taken.includes(port) || taken.includes(port - 10_000)) continue
    const bus = createServer()
    const free = await new Promise<boolean>((resolve) => {
      bus.once('error', () => resolve(false))
      bus.listen(port + 10_000, '127.0.0.1', () => bus.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error('no port for a cluster node with its bus port free, after 200 tries')
}

/**
 * Starts three `redis-server --cluster-enabled yes` (six with `replicas`: a replica per master,
 * failing over after a second) and joins them with `redis-cli --cluster create`.
 */
export async function startCluster(options: { replicas?: boolean } = {}): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sk-cluster-'))
  const ports: number[] = []
  for (let i = 0; i < (options.replicas ? 6 : 3); i++) ports.push(await clusterPort(ports))
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
        '--cluster-node-timeout',
        options.replicas ? '1000' : '15000',
        // A replica paused by a test (its master killed meanwhile) still takes over on resuming.
        '--cluster-replica-validity-factor',
        '0',
      ],
      { cwd: dir, stdio: 'ignore' },
    ),
  )
  const clients: Cluster[] = []
  const cluster: LocalCluster = {
    nodes: ports.map((port) => `127.0.0.1:${port}`),
    client(options?: ClusterOptions) {
      const client = new Cluster(
        ports.map((port) => ({ host: '127.0.0.1', port })),
        options,
      )
      clients.push(client)
      return client
    },
    kill(address: string) {
      children[cluster.nodes.indexOf(address)]?.kill('SIGKILL')
    },
    pause(address: string, paused: boolean) {
      children[cluster.nodes.indexOf(address)]?.kill(paused ? 'SIGSTOP' : 'SIGCONT')
    },
    async replicaOf(address: string) {
      const [host, port] = address.split(':')
      const probe = new Redis(Number(port), host!, { lazyConnect: true, retryStrategy: () => null })
      probe.on('error', () => {})
      try {
        await probe.connect()
        // CLUSTER NODES: `<id> <host:port@bus> <flags> <master id> ...`, one node a line.
        const lines = String(await probe.cluster('NODES'))
          .trim()
          .split('\n')
          .map((line) => line.split(' '))
        const id = lines.find((f) => f[2]!.includes('myself'))![0]
        const replica = lines.find((f) => f[3] === id)
        if (replica === undefined) throw new Error(`the master ${address} has no replica`)
        return replica[1]!.split('@')[0]!
      } finally {
        probe.disconnect()
      }
    },
    async masters() {
      for (const address of cluster.nodes) {
        const [host, port] = address.split(':')
        const probe = new Redis(Number(port), host!, {
          lazyConnect: true,
          retryStrategy: () => null,
        })
        probe.on('error', () => {})
        try {
          await probe.connect()
          const slots = (await probe.cluster('SLOTS')) as unknown as [
            number,
            number,
            [string, number],
          ][]
          // In the order of their slots.
          slots.sort((a, b) => a[0] - b[0])
          return [...new Set(slots.map(([, , [h, p]]) => `${h}:${p}`))]
        } catch {
          // A killed node: ask the next.
        } finally {
          probe.disconnect()
        }
      }
      throw new Error('no node of the local Redis Cluster answers')
    },
    async stop() {
      // A node a failed test left stopped answers nothing: resume every node, and close each
      // client without waiting on a command that may never be answered.
      for (const child of children) child.kill('SIGCONT')
      for (const c of clients) c.disconnect()
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
      [
        '--cluster',
        'create',
        ...cluster.nodes,
        '--cluster-replicas',
        options.replicas ? '1' : '0',
        '--cluster-yes',
      ],
      { encoding: 'utf8' },
    )
    if (created.status !== 0) throw new Error(`redis-cli --cluster create: ${created.stderr}`)
    for (const port of ports) {
      await until(`cluster_state:ok on ${port}`, async () => {
        const probe = new Redis(port, '127.0.0.1')
        try {
          if (!String(await probe.cluster('INFO')).includes('cluster_state:ok')) return false
          // A replica counts once it has synced with its master.
          const replication = await probe.info('replication')
          return (
            !replication.includes('role:slave') || replication.includes('master_link_status:up')
          )
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
